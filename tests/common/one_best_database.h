// A tuning database holding one measured best, for tests of what a problem's row keeps.
#pragma once

#include <string>

#include "db/tuning_db.h"
#include "tests/common/devices.h"

namespace tgemm::testing {

// Writes at `path` a database whose one trial, `config` on `problem` on the H200 (10 us), is
// the problem's best.
inline void write_one_best(const std::string& path, const Problem& problem,
                           const KernelConfig& config) {
  TuningDb db(path, TuningDb::Mode::read_write);
  const int64_t run = db.begin_run("test", "tgemm", "sm_90");
  const int64_t device_id = db.upsert_device(device("NVIDIA H200", "sm_90", 132));
  const int64_t problem_id = db.upsert_problem(problem);
  TrialResult t;
  t.config = config;
  t.status = TrialStatus::ok;
  t.time_min_us = t.time_median_us = t.time_max_us = 10;
  t.runs = 10;
  db.record_trial(run, problem_id, db.upsert_kernel(config, "h"), device_id, std::nullopt, t);
  db.update_best(problem_id, device_id);
  db.finish_run(run, "fixture");
}

}  // namespace tgemm::testing
