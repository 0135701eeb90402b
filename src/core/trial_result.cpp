#include "src/core/trial_result.h"

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

}  // namespace tgemm
