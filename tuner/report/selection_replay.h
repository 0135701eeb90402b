// Replays libtgemm's kernel selection offline: for every problem tuned in a "truth" database,
// the kernel the dispatcher would pick from another database, and how fast that kernel
// measured in the truth database against the problem's best. Same KernelSelector as the
// library, no GPU: the measure of how well untuned shapes are served.
#pragma once

#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "tgemm/tgemm.h"

namespace tgemm {

struct ReplayRow {
  std::string problem_key;
  std::string device_name;
  Selection path = Selection::cublas;
  std::string chosen;    // canonical name, empty for cuBLAS
  double best_us = 0;    // the truth database's best for the problem
  double chosen_us = 0;  // the chosen kernel's time there; 0 when it was never measured
};

// `source`: what the dispatcher reads. `truth`: databases tuned on the problems replayed.
// `leave_one_out`: each problem is dropped from the source while it is replayed (for a
// source and truth that are the same database).
std::vector<ReplayRow> replay_selection(TuningDb& source, TuningDb& truth,
                                        bool leave_one_out = false);

}  // namespace tgemm
