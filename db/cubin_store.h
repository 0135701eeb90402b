// CubinStore: the rows a compiled kernel is stored in (its run, its kernel, its binary). The
// tuner stores every build here; the library's cubin write-back (CubinWriteBack::on) stores
// the cubins it compiled, and writes nothing else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "db/db_connection.h"
#include "src/core/kernel_config.h"
#include "src/core/tuning_records.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

// The run under which the library writes back the cubins it compiled (CubinWriteBack::on).
inline constexpr const char* kCubinWriteBackRun = "libtgemm (cubin write-back)";

class CubinStore {
 public:
  explicit CubinStore(DbConnection& db) : db_(db) {}

  // Runs: every row the tuner writes points at the run that produced it.
  int64_t begin_run(const std::string& command_line, const std::string& tool_version,
                    const std::string& arch);
  void finish_run(int64_t run_id, const std::string& summary);

  // Idempotent: the same (template hash, canonical name) returns the same id.
  int64_t upsert_kernel(const KernelConfig& config, const std::string& template_hash);

  // Binaries by NvrtcCompiler cache key (failures and prunes too, so they are not retried).
  // A found ok binary whose cubin fails its checksum comes back with checksum_ok false.
  std::optional<BinaryRecord> find_binary(const std::string& cache_key);
  // The same key stored again (a second tuner, a forced rebuild) replaces the row and keeps
  // its id, so trials that point at it stay valid.
  int64_t store_binary(int64_t run_id, int64_t kernel_id, const CompiledKernel& compiled,
                       BinaryStatus status, const std::string& reason);

 private:
  DbConnection& db_;
};

}  // namespace tgemm
