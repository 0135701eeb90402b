// What tgemm-tune prints: --explain's pruning per family, the table of each problem's best
// against cuBLAS, and the summary line the run is also recorded with.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/core/tuning_records.h"
#include "src/templates/search_space.h"
#include "tuner/compile/compile_stage.h"

namespace tgemm {

// A problem's line in the table.
struct ShapeReport {
  std::string name;
  Problem problem;
  std::optional<BestEntry> best;
  double cublas_us = 0;
  std::string note;  // why there is no best
};

// Counts of trial outcomes over a run, for the summary line.
struct TrialCounts {
  std::map<TrialStatus, uint64_t> by_status;
  uint64_t skipped = 0;  // already in the database
  uint64_t stale = 0;    // in the database but stale (another NVRTC or driver): measured again
  uint64_t total() const {
    uint64_t n = 0;
    for (auto& [s, c] : by_status) n += c;
    return n;
  }
};

// What the summary line tells of a run.
struct TuningSummary {
  uint64_t configs_asked = 0;
  size_t variants = 0;
  CompileStats compile;
  int jobs = 1;
  // Set when the run measured on a GPU (not compile only).
  std::optional<TrialCounts> trials;
  std::optional<uint64_t> worker_restarts;
  double time_budget_s = 0;  // > 0: what the time budget bought
  double exploring_s = 0, candidate_s = 0;
  size_t pairs_finished = 0, pairs_stopped = 0;
  double total_s = 0;
};

// One line: configs asked, binaries compiled, trials by status, the time budget and the time.
std::string format_summary(const TuningSummary& summary);

// The table of each problem's best against cuBLAS, with its legend, after a blank line.
std::string format_results_table(const std::vector<ShapeReport>& reports);

// --explain: what each constraint of a family's space pruned on `arch` (the first constraint a
// config fails is the one it counts under).
std::string format_pruning(const std::string& family, const std::string& arch,
                           const SearchSpace::Enumeration& enumeration);

}  // namespace tgemm
