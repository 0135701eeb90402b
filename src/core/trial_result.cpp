#include "src/core/trial_result.h"

#include <cmath>

#include "src/core/error.h"

namespace tgemm {

namespace {
constexpr std::pair<TrialStatus, std::string_view> kNames[] = {
    {TrialStatus::ok, "ok"},
    {TrialStatus::invalid, "invalid"},
    {TrialStatus::compile_failed, "compile_failed"},
    {TrialStatus::resource_exceeded, "resource_exceeded"},
    {TrialStatus::launch_failed, "launch_failed"},
    {TrialStatus::crashed, "crashed"},
    {TrialStatus::timeout, "timeout"},
    {TrialStatus::wrong_result, "wrong_result"},
};
}  // namespace

std::string to_string(TrialStatus status) {
  for (const auto& [s, name] : kNames)
    if (s == status) return std::string(name);
  return "?";
}

TrialStatus parse_trial_status(std::string_view text) {
  for (const auto& [s, name] : kNames)
    if (name == text) return s;
  fail("unknown trial status '{}'", text);
}

std::optional<std::string> implausible_measurement(const TrialResult& t) {
  if (t.status != TrialStatus::ok) return std::nullopt;
  const auto non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!non_negative(t.time_median_us) || t.time_median_us == 0)
    return fmt::format("a median time of {} us is not a positive finite time", t.time_median_us);
  if (!non_negative(t.time_min_us) || !non_negative(t.time_max_us))
    return fmt::format("a min or max time ({}, {} us) is not a finite non-negative time",
                       t.time_min_us, t.time_max_us);
  if (t.runs < 0) return fmt::format("{} timed runs", t.runs);
  if (!non_negative(t.tflops))
    return fmt::format("{} TFLOP/s is not a finite non-negative rate", t.tflops);
  if (!non_negative(t.max_rel_error))
    return fmt::format("a relative error of {} is not a finite non-negative number",
                       t.max_rel_error);
  return std::nullopt;
}

}  // namespace tgemm
