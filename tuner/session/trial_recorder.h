// TrialRecorder: what a tuning run writes of its measurements: every trial (a kernel's, a
// vendor call's) with the build it was measured with, cuBLAS's time per problem, and the best
// per (problem, device); and what it found already recorded (current, or stale and measured
// again), counted for the run's summary.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/current_build.h"
#include "src/core/device_info.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/templates/gemm_template.h"
#include "tuner/compile/compile_stage.h"
#include "tuner/report/tuning_report.h"

namespace tgemm {

class TrialRecorder {
 public:
  // Records under `run_id` for `device` (null: compile only, where only problems are
  // recorded) stored as `device_id`; a trial is current when `current` judges it so.
  TrialRecorder(TuningDb& db, int64_t run_id, const DeviceInfo* device, int64_t device_id,
                CurrentBuild current);

  int64_t problem_id(const Problem& problem);
  // The problem's best on the device among its current trials, updated first (a stale best is
  // no yardstick); nullopt without one, or without a device.
  std::optional<BestEntry> best(int64_t problem_id, const Problem& problem);

  // Whether the problem holds a current trial of the kernel, counted as skipped; a stale one is
  // counted as such and, like none, must be measured.
  bool has_current_trial(int64_t problem_id, int64_t kernel_id, const GemmTemplate& family);
  // A measured (or refused) trial of a compiled config.
  void record(int64_t problem_id, const CompileOutcome& outcome, const TrialResult& trial);
  // The vendor calls raced on the problem (CublasTiming::vendor_trials) as trials of their
  // pseudo-families, whose code is the cuBLAS version: contenders for the best like any kernel.
  void record_vendor_trials(int64_t problem_id, const std::vector<TrialResult>& trials);
  // `sgemm_rel_error`: of f32x3 problems, SGEMM's error against FP64 (nullopt keeps the stored
  // one).
  void record_cublas_time(int64_t problem_id, double median_us,
                          std::optional<double> sgemm_rel_error);

  const TrialCounts& counts() const { return counts_; }

 private:
  TuningDb& db_;
  int64_t run_id_;
  const DeviceInfo* device_;
  int64_t device_id_;
  CurrentBuild current_;
  TrialCounts counts_;
};

}  // namespace tgemm
