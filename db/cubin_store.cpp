#include "db/cubin_store.h"

#include <fmt/format.h>

#include "db/schema.h"
#include "db/sqlite_statement.h"
#include "db/stored_rows.h"
#include "src/core/vendor_call.h"

namespace tgemm {

int64_t CubinStore::begin_run(const std::string& command_line, const std::string& tool_version,
                              const std::string& arch) {
  Statement s(db_.handle(), db_.path(), "record a run",
              "INSERT INTO runs (command_line, tool_version, arch) VALUES (?1, ?2, ?3) "
              "RETURNING id");
  s.bind(1, command_line).bind(2, tool_version).bind(3, arch);
  return s.single_int();
}

void CubinStore::finish_run(int64_t run_id, const std::string& summary) {
  Statement s(db_.handle(), db_.path(), "finish a run",
              "UPDATE runs SET finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), summary = ?2 "
              "WHERE id = ?1");
  s.bind(1, run_id).bind(2, summary).run();
  if (sqlite3_changes(db_.handle()) == 0)
    fail("tuning database '{}' has no run {} to finish", db_.path(), run_id);
}

int64_t CubinStore::upsert_kernel(const KernelConfig& config, const std::string& template_hash) {
  const std::string name = config.canonical_name();
  // Look first: the tuner asks for every config of every run, and a read takes no write lock.
  {
    Statement find(db_.handle(), db_.path(), "look up a kernel",
                   "SELECT id FROM kernels WHERE template_hash = ?1 AND canonical_name = ?2");
    find.bind(1, template_hash).bind(2, name);
    if (find.step()) return find.integer("id");
  }
  Statement s(db_.handle(), db_.path(), "record a kernel",
              "INSERT INTO kernels (template, template_hash, canonical_name, params, library) "
              "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (template_hash, canonical_name) "
              "DO UPDATE SET template = kernels.template RETURNING id");
  s.bind(1, config.template_name)
      .bind(2, template_hash)
      .bind(3, name)
      .bind(4, config.params_text())
      .bind(5, library_of(config.template_name));
  return s.single_int();
}

std::optional<BinaryRecord> CubinStore::find_binary(const std::string& cache_key) {
  Statement s(db_.handle(), db_.path(), "look up a binary",
              fmt::format("SELECT {} FROM binaries b WHERE b.cache_key = ?1", kBinaryColumns));
  s.bind(1, cache_key);
  return s.step() ? checked_binary_at(s) : std::nullopt;
}

int64_t CubinStore::store_binary(int64_t run_id, int64_t kernel_id, const CompiledKernel& compiled,
                                 BinaryStatus status, const std::string& reason) {
  if (compiled.cache_key.empty()) fail("cannot store a binary without a cache key");
  if (status == BinaryStatus::ok && compiled.cubin.empty())
    fail("cannot store binary {} as ok: it has no cubin", compiled.cache_key);
  const std::string why = reason.empty() && status != BinaryStatus::ok ? compiled.error : reason;
  Statement s(db_.handle(), db_.path(), "store a binary",
              "INSERT INTO binaries (kernel_id, arch, nvrtc_version, op_a, op_b, entry, options, "
              "cache_key, cubin, registers, smem_bytes, stack_bytes, spill_store_bytes, "
              "spill_load_bytes, resources_found, compile_ms, status, reason, log, run_id, "
              "types, checksum, code_hash, batch_form, epilogue) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
              "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, "
              "?24, ?25) "
              "ON CONFLICT (cache_key) DO UPDATE SET "
              "types = excluded.types, "
              "kernel_id = excluded.kernel_id, arch = excluded.arch, "
              "nvrtc_version = excluded.nvrtc_version, op_a = excluded.op_a, op_b = excluded.op_b, "
              "entry = excluded.entry, options = excluded.options, cubin = excluded.cubin, "
              "registers = excluded.registers, smem_bytes = excluded.smem_bytes, "
              "stack_bytes = excluded.stack_bytes, spill_store_bytes = excluded.spill_store_bytes, "
              "spill_load_bytes = excluded.spill_load_bytes, "
              "resources_found = excluded.resources_found, compile_ms = excluded.compile_ms, "
              "status = excluded.status, reason = excluded.reason, log = excluded.log, "
              "run_id = excluded.run_id, checksum = excluded.checksum, "
              "code_hash = excluded.code_hash, batch_form = excluded.batch_form, "
              "epilogue = excluded.epilogue, "
              "created_at = excluded.created_at RETURNING id");
  const PtxasResources& r = compiled.resources;
  s.bind(1, kernel_id).bind(2, compiled.arch).bind(3, compiled.nvrtc_version);
  s.bind(4, to_string(compiled.op_a)).bind(5, to_string(compiled.op_b)).bind(6, compiled.entry);
  s.bind(7, compiled.options).bind(8, compiled.cache_key).bind_blob(9, compiled.cubin);
  s.bind(10, r.registers).bind(11, r.smem_bytes).bind(12, r.stack_frame_bytes);
  s.bind(13, r.spill_store_bytes).bind(14, r.spill_load_bytes).bind(15, r.found);
  s.bind(16, compiled.compile_ms).bind(17, to_string(status)).bind(18, why);
  s.bind(19, compiled.log).bind_run(20, run_id).bind(21, compiled.types.name());
  s.bind_or_null(22, compiled.cubin.empty() ? "" : cubin_checksum(compiled.cubin));
  s.bind_or_null(23, compiled.code_hash);
  s.bind(24, int(compiled.batch_form)).bind(25, compiled.epilogue.name());
  return s.single_int();
}

}  // namespace tgemm
