// The dispatcher's kernel selector for one device of a tuning database, as libtgemm builds
// it (the device's best entries and trials, the shipped defaults), optionally without one
// problem, to see how it would be served had nobody tuned it. Shared by selection replay,
// the HTML report and explain.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/current_build.h"
#include "src/core/device_info.h"
#include "src/dispatch/kernel_selector.h"

namespace tgemm {

class DatabaseSelector {
 public:
  // Every best and trial as stored: replay and reports judge what was measured.
  DatabaseSelector(TuningDb& db, const DeviceInfo& device);
  // A copy without what this build finds stale, as libtgemm drops it (explain).
  DatabaseSelector served_now() const;

  // The selector without `left_out` (a problem key; empty: nothing left out).
  KernelSelector selector(const std::string& left_out = "") const;
  // The selector without any of these problems (keys): how a group would be served untuned.
  KernelSelector selector(const std::set<std::string>& left_out) const;
  const std::vector<BestEntry>& tuned() const { return tuned_; }
  const std::vector<TrialRecord>& measured() const { return measured_; }
  // What served_now() left out (nothing for the database as recorded).
  const StaleDropped& stale() const { return stale_; }

 private:
  DeviceInfo device_;
  std::vector<BestEntry> tuned_;
  std::vector<TrialRecord> measured_;
  std::vector<DeviceCeiling> ceilings_;
  StaleDropped stale_;
};

}  // namespace tgemm
