// TrialResult: the outcome of evaluating one config on one problem. Failures are values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "src/core/kernel_config.h"

namespace tgemm {

enum class TrialStatus {
  ok,
  invalid,  // the config cannot run this problem (alignment, dtype)
  compile_failed,
  resource_exceeded,  // registers, shared memory or spills over the arch's limits
  launch_failed,
  crashed,  // the worker died or hit a sticky CUDA error
  timeout,  // the watchdog killed the worker
  wrong_result,
};

std::string to_string(TrialStatus status);
TrialStatus parse_trial_status(std::string_view text);  // throws Error on unknown text

struct TrialResult {
  KernelConfig config;
  TrialStatus status = TrialStatus::invalid;
  std::string error;  // why, for every status but ok
  double time_min_us = 0, time_median_us = 0, time_max_us = 0;
  int runs = 0;
  double tflops = 0;         // at the median time
  double max_rel_error = 0;  // ||C - Cref|| / ||Cref||
};

// Why an ok trial's figures are no measurement, or nullopt: a median time that is not a
// positive finite number, or a min or max time, TFLOP/s, run count or error that is negative
// or not finite (0 stands for "not recorded"). A failed trial's figures are not used: nullopt.
std::optional<std::string> implausible_measurement(const TrialResult& trial);

}  // namespace tgemm
