// tgemm-db's summaries of a whole database: the HTML report (report), and how well libtgemm's
// choices serve the problems tuned elsewhere (replay). Each returns the tool's exit status.
#pragma once

#include <string>

#include "db/tuning_db.h"

namespace tgemm::cli::db_tool {

// `top` configs per problem, 1 to 100 (checked by the caller).
int run_report(TuningDb& db, const std::string& out_path, int top);
// Either `truth_path` or `leave_one_out`, not both (checked here).
int run_replay(TuningDb& db, const std::string& truth_path, bool leave_one_out);

}  // namespace tgemm::cli::db_tool
