// tgemm-db's questions answered from the database as stored: the tuned problems (list), one
// shape's best (best), trials (show) and serving (explain), every trial as CSV or JSON (export)
// and the devices' measured ceilings (ceilings). Each returns the tool's exit status.
#pragma once

#include <string>

#include "db/tuning_db.h"
#include "tuner/cli/db_shape.h"

namespace tgemm::cli::db_tool {

int run_list(TuningDb& db);
int run_best(TuningDb& db, const ShapeArgs& args);
int run_show(TuningDb& db, const ShapeArgs& args);
int run_explain(TuningDb& db, const ShapeArgs& args);
// `format` is csv or json (checked by the caller); `output` empty or "-": standard output.
int run_export(TuningDb& db, const std::string& format, const std::string& output);
int run_ceilings(TuningDb& db, const std::string& device);

}  // namespace tgemm::cli::db_tool
