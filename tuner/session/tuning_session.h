// TuningSession: one tgemm-tune run. Shapes and space in, for each layout the proposed
// configs compiled (CompileStage), then for each problem every config verified and timed
// in the worker, every trial and the best per (problem, device) stored in the database.
#pragma once

#include <cstdint>
#include <string>

namespace tgemm {

struct TuneOptions {
  std::string shapes_path;
  std::string space_path;  // empty: the template's default space
  std::string db_path = "tgemm.db";
  std::string arch;  // empty: the GPU's, or sm_75 without one
  // The spaces hold tens of thousands of legal configs: sample by default.
  std::string strategy = "random";
  uint64_t budget = 200;  // configs per layout, 0 = all the strategy proposes
  uint64_t seed = 1;
  int jobs = 1;
  int device = 0;
  bool compile_only = false;
  double timeout_s = 10;     // watchdog for one kernel evaluation
  std::string worker_path;   // tgemm-worker
  std::string command_line;  // recorded with the run
};

// Runs the whole session; throws Error for bad input or a database it cannot use.
// Kernel failures are trial statuses, not exceptions.
void run_tuning_session(const TuneOptions& options);

// configs/spaces/<template>.yaml next to an installed or in-tree tgemm-tune, found from the
// executable's folder; throws Error when there is none.
std::string default_space_path(const std::string& exe_dir, const std::string& template_name);

}  // namespace tgemm
