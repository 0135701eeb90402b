// TuningSession: one tgemm-tune run. Shapes and spaces in; for each problem variant (layout
// and types) every family's proven candidates (candidates.h), then for each family the
// strategy's batches under the budget, each compiled (CompileStage), then verified and timed on
// every problem of the variant in the worker, the results told to the strategy before it
// proposes again; every trial and the best per (problem, device) stored in the database.
// The run connects its parts: the plan (tuning_plan.h, time_budget.h), the strategies
// (strategy_factory.h), the measuring (trial_measurer.h), the recording (trial_recorder.h)
// and the report (report/tuning_report.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/current_build.h"
#include "tuner/session/shard.h"

namespace tgemm {

struct TuneOptions {
  std::string shapes_path;
  // Empty: the shipped space of every registered family (embedded in the library, so any
  // build folder or install has it); else only these spaces.
  std::vector<std::string> space_paths;
  std::string db_path = "tgemm.db";
  std::string arch;  // empty: the GPU's, or sm_75 without one
  // The spaces hold tens of thousands of legal configs: sample by default.
  std::string strategy = "random";
  uint64_t budget = 200;       // configs explored per layout, 0 = all the strategy proposes
  double budget_fraction = 0;  // > 0: the budget is this share of each family's legal space
  // > 0: stop exploring once this many seconds are spent exploring (the proven candidates are
  // measured first and outside it), shared out over the (variant, family) pairs still to tune
  // (what one pair leaves over goes to the rest) and within a batch over the problems
  double time_budget_s = 0;
  double exploration = 0.1;  // model and nearest: share of the proposals drawn at random
  uint64_t seed = 1;
  int jobs = 1;
  int device = 0;
  bool compile_only = false;
  bool quiet = false;        // no progress lines, warnings and errors only
  bool explain = false;      // print what each constraint pruned and why each best won
  Shard shard;               // the share of the shape file this run tunes
  double timeout_s = 10;     // watchdog for one kernel evaluation
  std::string worker_path;   // tgemm-worker
  std::string command_line;  // recorded with the run
  // Non-empty: only these problems (Problem::key()s of the shape file's, within the shard),
  // tuned in this order; --devices hands each GPU's session its share this way.
  std::vector<std::string> problem_keys;
  // count > 1: of every family's proposals, only share `index` (in_config_share) is
  // measured; --devices gives identical GPUs all the problems and one share each.
  Shard config_share;
};

// What a session did, for a caller running several (--devices).
struct SessionTotals {
  uint64_t trials_run = 0;  // measured now (not already recorded)
  CurrentBuild build;       // what the session judged stale by
};

// Runs the whole session; throws Error for bad input or a database it cannot use.
// Kernel failures are trial statuses, not exceptions.
SessionTotals run_tuning_session(const TuneOptions& options);

}  // namespace tgemm
