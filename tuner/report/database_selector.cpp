#include "tuner/report/database_selector.h"

#include "src/templates/build_versions.h"

namespace tgemm {

DatabaseSelector::DatabaseSelector(TuningDb& db, const DeviceInfo& device) : device_(device) {
  for (TrialRecord& r : db.trials("", device.name))
    if (r.arch == device.arch) measured_.push_back(std::move(r));
  tuned_ = db.best_entries("", device.name, device.arch);
  ceilings_ = db.ceilings(device.name, device.arch);
}

DatabaseSelector DatabaseSelector::served_now() const {
  DatabaseSelector now = *this;
  now.stale_ = drop_stale(this_build(device_.driver_version), &now.tuned_, &now.measured_);
  return now;
}

KernelSelector DatabaseSelector::selector(const std::string& left_out) const {
  return selector(left_out.empty() ? std::set<std::string>{} : std::set<std::string>{left_out});
}

KernelSelector DatabaseSelector::selector(const std::set<std::string>& left_out) const {
  std::vector<BestEntry> kept_tuned;
  std::vector<TrialRecord> kept_trials;
  for (const BestEntry& e : tuned_)
    if (!left_out.count(e.problem.key())) kept_tuned.push_back(e);
  for (const TrialRecord& r : measured_)
    if (!left_out.count(r.problem.key())) kept_trials.push_back(r);
  return KernelSelector(std::move(kept_tuned), shipped_default_kernels(), device_.arch,
                        device_.sm_count, kept_trials, ceilings_);
}

}  // namespace tgemm
