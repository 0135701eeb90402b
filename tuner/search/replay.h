// Replay: runs a strategy against a database's recorded trials instead of a GPU (Kernel
// Tuner's simulation runner), so strategies are compared on CPU. The space of a family is
// what the database recorded for it; a proposed config with a trial gets its recorded
// result, one without counts as asked but unmeasured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/device_ceiling.h"
#include "src/core/device_info.h"
#include "src/core/tuning_records.h"
#include "tuner/search/budget.h"

namespace tgemm {

class TuningDb;

struct ReplayInput {
  std::vector<TrialRecord> trials;
  std::vector<DeviceInfo> devices;
  std::vector<DeviceCeiling> ceilings;
};
// Every trial, device and ceiling of a database.
ReplayInput load_replay_input(TuningDb& db);

struct ReplayOptions {
  std::string strategy = "model";
  Budget budget;  // a count or a share of each family's recorded space (no time)
  uint64_t seed = 1;
  double exploration = 0.1;
  size_t batch = 256;  // the tuner's batch (the model strategy asks in smaller ones)
  std::string device;  // device name; empty: the first with trials
  // Each problem tuned alone with the budget (a new shape beside a database of the others),
  // instead of the tuner's groups (every problem of a variant measuring every config).
  bool per_problem = false;
};

// One problem, over every family that recorded trials of it.
struct ReplayProblem {
  std::string key;
  std::string family;           // of the best recorded trial
  double best_recorded_us = 0;  // fastest ok trial in the database (0: none)
  double best_found_us = 0;     // fastest ok trial among the configs asked (0: none)
  uint64_t asked = 0, measured = 0, unmeasured = 0;
};

struct ReplayResult {
  std::string device;
  std::vector<ReplayProblem> problems;  // with a recorded best
  uint64_t space = 0;                   // recorded configs over the families replayed
  uint64_t asked = 0;                   // configs asked over the groups
  uint64_t unmeasured = 0;              // asked configs the database has no trial of (per problem)
  // Geometric mean over problems of best found / best recorded (a problem where nothing
  // asked ran counts as kNothingFound).
  double geomean_ratio = 0;
  static constexpr double kNothingFound = 10.0;
  // Problems whose found best is within `share` of the recorded best.
  size_t within(double share) const;
};

// The model strategies learn a prior correction from the trials of problems outside the group
// (ReplayOptions::per_problem: every other problem), as the tuner does from its database.
// The model strategies learn a prior correction from the trials of problems outside the group
// (ReplayOptions::per_problem: every other problem), as the tuner does from its database.
// Throws Error for a time budget (the database holds no compile times to spend one), an
// unknown strategy or device, and a database without ok trials.
ReplayResult replay(const ReplayInput& input, const ReplayOptions& options);

// CSV of the model's prediction beside every recorded ok time (problem, config, predicted_us,
// recorded_us), for judging the model itself.
std::string model_predictions_csv(const ReplayInput& input, const std::string& device = "");

// Per-problem table and the overall line, as tgemm-simulate prints them.
std::string format_replay(const ReplayResult& result, const ReplayOptions& options);

}  // namespace tgemm
