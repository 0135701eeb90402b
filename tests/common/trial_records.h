// A recorded ok trial, as the dispatcher and the strategies read it from a database.
#pragma once

#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/tuning_records.h"

namespace tgemm::testing {

// `config` measured on `problem` on the H200 at a median of `us` microseconds.
inline TrialRecord ok_trial_record(const Problem& problem, const KernelConfig& config, double us) {
  TrialRecord r;
  r.problem = problem;
  r.device_name = "NVIDIA H200";
  r.arch = "sm_90";
  r.trial.config = config;
  r.trial.status = TrialStatus::ok;
  r.trial.time_median_us = us;
  return r;
}

}  // namespace tgemm::testing
