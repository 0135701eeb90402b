// Replay: runs a strategy against a database's recorded trials instead of a GPU (Kernel
// Tuner's simulation runner), so strategies are compared on CPU. The space of a family is
// what the database recorded for it; a proposed config with a trial gets its recorded
// result, one without counts as asked but unmeasured. It runs the tuner's schedule: per
// variant, every family's proven candidates (candidates.h) on every problem, then each
// family's strategy under the budget, a time budget spent on a simulated clock.
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
  Budget budget;  // a count or a share of each family's recorded space, or a simulated time
  uint64_t seed = 1;
  double exploration = 0.1;
  size_t batch = 256;  // the tuner's batch (the model strategy asks in smaller ones)
  std::string device;  // device name; empty: the first with trials
  // Each problem tuned alone with the budget (a new shape beside a database of the others),
  // instead of the tuner's groups (every problem of a variant measuring every config).
  bool per_problem = false;
  // A time budget's simulated cost of one trial besides its recorded runs (loading, checking,
  // warming up, compiling): a recorded trial costs this plus runs x its median, one the
  // database lacks this alone.
  double trial_overhead_s = 0.05;
};

// One config asked on a problem, in the order asked.
struct ReplayAsk {
  KernelConfig config;
  bool candidate = false;  // one of the proven candidates, else explored under the budget
  bool measured = false;   // the database holds a trial of it
};

// One problem, over every family that recorded trials of it.
struct ReplayProblem {
  std::string key;
  std::string family;           // of the best recorded trial
  double best_recorded_us = 0;  // fastest ok trial in the database (0: none)
  double best_found_us = 0;     // fastest ok trial among the configs asked (0: none)
  uint64_t asked = 0, measured = 0, unmeasured = 0;
  uint64_t candidates = 0;       // of `asked`, the proven candidates
  std::vector<ReplayAsk> trace;  // every config asked on it, in order
};

struct ReplayResult {
  std::string device;
  std::vector<ReplayProblem> problems;  // with a recorded best
  uint64_t space = 0;                   // recorded configs over the families replayed
  uint64_t asked = 0;                   // configs asked over the groups
  uint64_t unmeasured = 0;              // asked configs the database has no trial of (per problem)
  double seconds = 0;                   // simulated time spent (ReplayOptions::trial_overhead_s)
  double candidate_seconds = 0;         // of it, on the candidates (outside a time budget)
  // Geometric mean over problems of best found / best recorded (a problem where nothing
  // asked ran counts as kNothingFound).
  double geomean_ratio = 0;
  static constexpr double kNothingFound = 10.0;
  // Problems whose found best is within `share` of the recorded best.
  size_t within(double share) const;
};

// The model strategies learn a prior correction from the trials of problems outside the group
// (ReplayOptions::per_problem: every other problem), as the tuner does from its database; the
// candidates are what the database without the group serves it, the shipped defaults and the
// nearest other shapes' fastest.
// Throws Error for an unknown strategy or device, and a database without ok trials.
ReplayResult replay(const ReplayInput& input, const ReplayOptions& options);

// CSV of the model's prediction beside every recorded ok time (problem, config, predicted_us,
// recorded_us), for judging the model itself.
std::string model_predictions_csv(const ReplayInput& input, const std::string& device = "");

// Per-problem table and the overall line, as tgemm-simulate prints them.
std::string format_replay(const ReplayResult& result, const ReplayOptions& options);

}  // namespace tgemm
