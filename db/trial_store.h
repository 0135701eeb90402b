// TrialStore: the measurements the tuner records (devices, problems, every trial, cuBLAS's
// times) and the best trial of each (problem, device) recomputed from them.
#pragma once

#include <cstdint>
#include <optional>

#include "db/db_connection.h"
#include "src/core/current_build.h"
#include "src/core/device_info.h"
#include "src/core/measured_with.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"

namespace tgemm {

class TrialStore {
 public:
  explicit TrialStore(DbConnection& db) : db_(db) {}

  // Idempotent: the same natural key returns the same id.
  int64_t upsert_device(const DeviceInfo& device);  // key: name, arch, sm_count
  int64_t upsert_problem(const Problem& problem);   // key: problem.key()

  // Trials: one per (problem, kernel, device); a rerun skips those already recorded.
  bool has_trial(int64_t problem_id, int64_t kernel_id, int64_t device_id);
  // The versions the recorded trial was measured with; nullopt when there is no such trial.
  std::optional<MeasuredWith> trial_measured_with(int64_t problem_id, int64_t kernel_id,
                                                  int64_t device_id);
  // Recording the same (problem, kernel, device) again replaces the result and keeps the id,
  // so a deliberate re-measurement wins; call update_best afterwards. `with`: the NVRTC and
  // driver it was measured with (empty: not known, stored as NULL).
  int64_t record_trial(int64_t run_id, int64_t problem_id, int64_t kernel_id, int64_t device_id,
                       std::optional<int64_t> binary_id, const TrialResult& trial,
                       const MeasuredWith& with = {});
  // cuBLAS's median time for a problem on a device (the ratio's denominator) and, for f32x3
  // problems, SGEMM's error against FP64 (nullopt keeps the one stored before).
  void record_cublas_time(int64_t run_id, int64_t problem_id, int64_t device_id, double median_us,
                          std::optional<double> sgemm_rel_error = std::nullopt);

  // Recomputes the best (fastest ok median) trial of a problem on a device; with `current`,
  // stale trials (CurrentBuild::stale_reason) cannot be the best.
  void update_best(int64_t problem_id, int64_t device_id, const CurrentBuild* current = nullptr);

 private:
  DbConnection& db_;
};

}  // namespace tgemm
