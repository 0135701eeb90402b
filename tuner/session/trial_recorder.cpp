#include "tuner/session/trial_recorder.h"

#include <utility>

#include "src/cuda/cublas_gemm.h"

namespace tgemm {

TrialRecorder::TrialRecorder(TuningDb& db, int64_t run_id, const DeviceInfo* device,
                             int64_t device_id, CurrentBuild current)
    : db_(db),
      run_id_(run_id),
      device_(device),
      device_id_(device_id),
      current_(std::move(current)) {}

int64_t TrialRecorder::problem_id(const Problem& problem) { return db_.upsert_problem(problem); }

std::optional<BestEntry> TrialRecorder::best(int64_t problem_id, const Problem& problem) {
  if (!device_) return std::nullopt;
  db_.update_best(problem_id, device_id_, &current_);
  auto stored = db_.best_entries(problem.key(), device_->name, device_->arch);
  if (stored.empty()) return std::nullopt;
  return stored.front();
}

bool TrialRecorder::has_current_trial(int64_t problem_id, int64_t kernel_id,
                                      const GemmTemplate& family) {
  const auto with = db_.trial_measured_with(problem_id, kernel_id, device_id_);
  if (!with) return false;
  if (!current_.stale_reason(family.name(), family.source().hash, *with)) {
    ++counts_.skipped;
    return true;
  }
  ++counts_.stale;
  return false;
}

void TrialRecorder::record(int64_t problem_id, const CompileOutcome& outcome,
                           const TrialResult& trial) {
  db_.record_trial(run_id_, problem_id, outcome.kernel_id, device_id_, outcome.binary_id, trial,
                   {current_.nvrtc_version, current_.driver_version});
  ++counts_.by_status[trial.status];
}

void TrialRecorder::record_vendor_trials(int64_t problem_id,
                                         const std::vector<TrialResult>& trials) {
  const std::string version = cublas_version();
  for (const TrialResult& t : trials)
    db_.record_trial(run_id_, problem_id, db_.upsert_kernel(t.config, version), device_id_,
                     std::nullopt, t, {current_.nvrtc_version, current_.driver_version});
}

void TrialRecorder::record_cublas_time(int64_t problem_id, double median_us,
                                       std::optional<double> sgemm_rel_error) {
  db_.record_cublas_time(run_id_, problem_id, device_id_, median_us, sgemm_rel_error);
}

}  // namespace tgemm
