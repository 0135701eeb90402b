// Explain: why a problem is served the way it is. For each device of a database: the path
// the dispatcher takes for it (tuned here, from which nearest tuned shape, a shipped
// default, or cuBLAS) and the path it would take had nobody tuned it; for a tuned problem,
// why its best won: resources, occupancy, waves, and its time against the runners-up and
// cuBLAS. The text `tgemm-db explain` and `tgemm-tune --explain` print.
#pragma once

#include <string>

#include "db/tuning_db.h"
#include "src/core/problem.h"

namespace tgemm {

// `device_filter`: a stored device name, or empty for every device. `runners_up`: how many
// trials after the best the table lists.
std::string explain_problem(TuningDb& db, const Problem& problem,
                            const std::string& device_filter = "", int runners_up = 4);

}  // namespace tgemm
