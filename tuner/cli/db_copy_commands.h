// tgemm-db's maintenance, which never writes its input: merge, refresh, prune and vacuum write a
// new database OUT, whole and checked, and stale judges the trials on a scratch copy. Each
// returns the tool's exit status.
#pragma once

#include <string>
#include <vector>

#include "db/tuning_db.h"

namespace tgemm::cli::db_tool {

// by_text: judged by template text alone, as the library does; else by machine code.
int run_stale(TuningDb& db, bool by_text);
int run_refresh(TuningDb& db, const std::string& out_path);
// prune: drop failed trials and unused cubins (and, with `stale`, stale trials); else vacuum.
int run_compact(TuningDb& db, const std::string& out_path, bool prune, bool stale);
int run_merge(const std::string& out_path, const std::vector<std::string>& in_paths);

}  // namespace tgemm::cli::db_tool
