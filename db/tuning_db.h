// TuningDb: the only code that speaks SQL. One SQLite file holds runs, devices, kernels,
// binaries (cubins), problems, every trial and the best config per (problem, device).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

// Outcome of compiling one (config, layout, arch): a cubin, or why there is none.
enum class BinaryStatus { ok, compile_failed, resource_exceeded };
std::string to_string(BinaryStatus status);

struct BinaryRecord {
  int64_t id = 0;
  int64_t kernel_id = 0;
  BinaryStatus status = BinaryStatus::ok;
  std::string reason;       // why it was pruned or failed; empty when ok
  CompiledKernel compiled;  // cubin, resources, options, cache key, arch, NVRTC version
};

// The best trial of one problem on one device, as the dispatcher and tgemm-db need it.
struct BestEntry {
  Problem problem;
  std::string device_name;
  std::string arch;
  KernelConfig config;
  std::string template_hash;
  TrialResult trial;
  double cublas_median_us = 0;  // cuBLAS timed in the same run, 0 if not measured
};

class TuningDb {
 public:
  enum class Mode { read_write, read_only };

  // read_write creates the file and schema when missing and migrates older schemas;
  // read_only never writes. Throws Error naming the path for: a file that is not a
  // SQLite database, a schema newer than this build (PRAGMA user_version), a directory
  // or path that cannot be written, a missing file in read_only mode.
  TuningDb(const std::string& path, Mode mode);
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  static int schema_version();  // the user_version this build writes
  const std::string& path() const { return path_; }

  // Runs: every row the tuner writes points at the run that produced it.
  int64_t begin_run(const std::string& command_line, const std::string& tool_version,
                    const std::string& arch);
  void finish_run(int64_t run_id, const std::string& summary);

  // Idempotent: the same natural key returns the same id.
  int64_t upsert_device(const DeviceInfo& device);  // key: name, arch, sm_count
  int64_t upsert_kernel(const KernelConfig& config, const std::string& template_hash);
  int64_t upsert_problem(const Problem& problem);  // key: problem.key()

  // Binaries by NvrtcCompiler cache key (failures and prunes too, so they are not retried).
  std::optional<BinaryRecord> find_binary(const std::string& cache_key);
  int64_t store_binary(int64_t run_id, int64_t kernel_id, const CompiledKernel& compiled,
                       BinaryStatus status, const std::string& reason);

  // Trials: one per (problem, kernel, device); a rerun skips those already recorded.
  bool has_trial(int64_t problem_id, int64_t kernel_id, int64_t device_id);
  int64_t record_trial(int64_t run_id, int64_t problem_id, int64_t kernel_id, int64_t device_id,
                       std::optional<int64_t> binary_id, const TrialResult& trial);
  // Records cuBLAS's median time for a problem on a device (the ratio's denominator).
  void record_cublas_time(int64_t run_id, int64_t problem_id, int64_t device_id, double median_us);

  // Recomputes the best (fastest ok median) trial of a problem on a device.
  void update_best(int64_t problem_id, int64_t device_id);

  // Best entries, filtered; empty strings / nullopt match everything.
  std::vector<BestEntry> best_entries(const std::string& problem_key = "",
                                      const std::string& device_name = "",
                                      const std::string& arch = "");
  // The cubin stored for the best entry's kernel with this layout, arch and NVRTC version.
  std::optional<BinaryRecord> find_binary_for(const KernelConfig& config,
                                              const std::string& template_hash, Op op_a, Op op_b,
                                              const std::string& arch,
                                              const std::string& nvrtc_version);

  // Wraps many writes in one transaction (much faster; all or nothing on error).
  void begin_transaction();
  void commit();
  void rollback();

 private:
  std::string path_;
  Mode mode_;
  sqlite3* db_ = nullptr;
};

}  // namespace tgemm
