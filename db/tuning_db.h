// TuningDb: the tools' handle on one tuning database file. It opens the file (creating or
// migrating it when writable) and hands each call to the piece that owns it: the reader, the
// cubin, trial and profile stores, re-keying, export, merge and maintenance. The library links
// none of this; it reads through db/tuning_db_reader.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/cubin_store.h"
#include "db/db_connection.h"
#include "db/db_maintenance.h"
#include "db/db_merge.h"
#include "db/profile_store.h"
#include "db/schema.h"
#include "db/trial_export.h"
#include "db/trial_rekey.h"
#include "db/trial_store.h"
#include "db/tuning_db_reader.h"

namespace tgemm {

class TuningDb {
 public:
  using Mode = DbConnection::Mode;

  // read_write creates the file and schema when missing and migrates older schemas;
  // read_only never writes (see DbConnection for what either refuses). Concurrent first opens
  // of a new file are safe. Rows that break the schema's rules are skipped as they are read,
  // with one warning per read.
  TuningDb(const std::string& path, Mode mode);
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  static int schema_version() { return tgemm::schema_version(); }
  const std::string& path() const { return db_.path(); }

  // CubinStore: runs, kernels, binaries.
  int64_t begin_run(const std::string& command_line, const std::string& tool_version,
                    const std::string& arch) {
    return cubins_.begin_run(command_line, tool_version, arch);
  }
  void finish_run(int64_t run_id, const std::string& summary) {
    cubins_.finish_run(run_id, summary);
  }
  int64_t upsert_kernel(const KernelConfig& config, const std::string& template_hash) {
    return cubins_.upsert_kernel(config, template_hash);
  }
  std::optional<BinaryRecord> find_binary(const std::string& cache_key) {
    return cubins_.find_binary(cache_key);
  }
  int64_t store_binary(int64_t run_id, int64_t kernel_id, const CompiledKernel& compiled,
                       BinaryStatus status, const std::string& reason) {
    return cubins_.store_binary(run_id, kernel_id, compiled, status, reason);
  }

  // TrialStore: devices, problems, trials, cuBLAS times, bests.
  int64_t upsert_device(const DeviceInfo& device) { return trials_.upsert_device(device); }
  int64_t upsert_problem(const Problem& problem) { return trials_.upsert_problem(problem); }
  bool has_trial(int64_t problem_id, int64_t kernel_id, int64_t device_id) {
    return trials_.has_trial(problem_id, kernel_id, device_id);
  }
  std::optional<MeasuredWith> trial_measured_with(int64_t problem_id, int64_t kernel_id,
                                                  int64_t device_id) {
    return trials_.trial_measured_with(problem_id, kernel_id, device_id);
  }
  int64_t record_trial(int64_t run_id, int64_t problem_id, int64_t kernel_id, int64_t device_id,
                       std::optional<int64_t> binary_id, const TrialResult& trial,
                       const MeasuredWith& with = {}) {
    return trials_.record_trial(run_id, problem_id, kernel_id, device_id, binary_id, trial, with);
  }
  void record_cublas_time(int64_t run_id, int64_t problem_id, int64_t device_id, double median_us,
                          std::optional<double> sgemm_rel_error = std::nullopt) {
    trials_.record_cublas_time(run_id, problem_id, device_id, median_us, sgemm_rel_error);
  }
  void update_best(int64_t problem_id, int64_t device_id, const CurrentBuild* current = nullptr) {
    trials_.update_best(problem_id, device_id, current);
  }

  // TrialRekey: trials moved to a new template text of the same machine code.
  std::vector<TrialBinary> trial_binaries() { return rekey_.trial_binaries(); }
  int64_t rekey_trials(int64_t run_id, const TrialBinary& stored, const std::string& template_hash,
                       const CompiledKernel& current,
                       const std::function<CurrentBuild(const DeviceInfo&)>& current_for) {
    return rekey_.rekey_trials(run_id, stored, template_hash, current, current_for);
  }

  // ProfileStore: device ceilings and Nsight Compute profiles.
  void store_ceilings(int64_t run_id, int64_t device_id,
                      const std::vector<DeviceCeiling>& ceilings) {
    profiles_.store_ceilings(run_id, device_id, ceilings);
  }
  bool has_ceilings(int64_t device_id) { return profiles_.has_ceilings(device_id); }
  void store_profiles(int64_t problem_id, int64_t device_id,
                      const std::vector<KernelProfile>& profiles) {
    profiles_.store_profiles(problem_id, device_id, profiles);
  }
  std::vector<KernelProfile> profiles(const std::string& device_name = "",
                                      const std::string& arch = "") {
    return profiles_.profiles(device_name, arch);
  }

  // TuningDbReader: what the library serves from.
  std::vector<DeviceInfo> devices() { return reader_.devices(); }
  std::vector<DeviceCeiling> ceilings(const std::string& device_name = "",
                                      const std::string& arch = "") {
    return reader_.ceilings(device_name, arch);
  }
  std::vector<BestEntry> best_entries(const std::string& problem_key = "",
                                      const std::string& device_name = "",
                                      const std::string& arch = "") {
    return reader_.best_entries(problem_key, device_name, arch);
  }
  std::vector<TrialRecord> trials(const std::string& problem_key = "",
                                  const std::string& device_name = "") {
    return reader_.trials(problem_key, device_name);
  }
  std::optional<BinaryRecord> find_binary_for(const KernelConfig& config,
                                              const std::string& template_hash,
                                              const Problem& variant, const std::string& arch,
                                              const std::string& nvrtc_version) {
    return reader_.find_binary_for(config, template_hash, variant, arch, nvrtc_version);
  }

  // TrialExport.
  TextTable trial_table() { return export_.trial_table(); }
  std::string trial_table_json() { return export_.trial_table_json(); }

  // Merge and maintenance.
  std::string integrity_problems() { return tgemm::integrity_problems(db_); }
  void copy_to(const std::string& dest_path) { maintenance_.copy_to(dest_path); }
  MergeCounts merge_from(const std::string& other_path) {
    return tgemm::merge_from(db_, other_path);
  }
  int64_t forget_problem(const std::string& problem_key) {
    return maintenance_.forget_problem(problem_key);
  }
  int64_t forget_vendor_calls() { return maintenance_.forget_vendor_calls(); }
  PruneCounts prune(const PruneOptions& options) { return maintenance_.prune(options); }

  // Wraps many writes in one transaction (much faster; all or nothing on error).
  void begin_transaction() { db_.begin_transaction(); }
  void commit() { db_.commit(); }
  void rollback() { db_.rollback(); }
  void set_busy_timeout_ms(int ms) { db_.set_busy_timeout_ms(ms); }

 private:
  DbConnection db_;
  TuningDbReader reader_{db_};
  CubinStore cubins_{db_};
  TrialStore trials_{db_};
  ProfileStore profiles_{db_};
  TrialRekey rekey_{db_, reader_.checks()};
  TrialExport export_{db_, reader_};
  DbMaintenance maintenance_{db_, reader_};
};

}  // namespace tgemm
