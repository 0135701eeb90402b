#include "src/core/current_build.h"

#include <fmt/format.h>

namespace tgemm {

std::optional<std::string> CurrentBuild::stale_reason(const std::string& family,
                                                      const std::string& template_hash,
                                                      const MeasuredWith& with) const {
  const auto it = template_hashes.find(family);
  if (it == template_hashes.end())
    return fmt::format("template family '{}' is not in this build", family);
  if (it->second != template_hash)
    return fmt::format("the device code of '{}' changed since it was tuned (source hash {} now {})",
                       family, template_hash, it->second);
  if (!with.nvrtc_version.empty() && !nvrtc_version.empty() && with.nvrtc_version != nvrtc_version)
    return fmt::format("compiled by NVRTC {}, this build has NVRTC {}", with.nvrtc_version,
                       nvrtc_version);
  if (with.driver_version != 0 && driver_version != 0 && with.driver_version != driver_version)
    return fmt::format("measured under CUDA driver {}, the GPU now runs driver {}",
                       with.driver_version, driver_version);
  return std::nullopt;
}

BuildsByDevice::BuildsByDevice(const std::vector<DeviceInfo>& devices,
                               const std::function<CurrentBuild(const DeviceInfo&)>& make) {
  for (const DeviceInfo& d : devices) builds_[{d.name, d.arch}] = make(d);
}

std::optional<std::string> BuildsByDevice::stale_reason(const std::string& device,
                                                        const std::string& arch,
                                                        const std::string& family,
                                                        const std::string& template_hash,
                                                        const MeasuredWith& with) const {
  const auto it = builds_.find({device, arch});
  if (it == builds_.end()) return std::nullopt;
  return it->second.stale_reason(family, template_hash, with);
}

StaleDropped drop_stale(const CurrentBuild& current, std::vector<BestEntry>* entries,
                        std::vector<TrialRecord>* trials) {
  StaleDropped dropped;
  auto stale = [&](const Problem& problem, const KernelConfig& config, const std::string& hash,
                   const MeasuredWith& with) {
    auto why = current.stale_reason(config.template_name, hash, with);
    if (why && dropped.example.empty()) dropped.example = problem.key() + ": " + *why;
    return why.has_value();
  };
  dropped.entries = std::erase_if(*entries, [&](const BestEntry& e) {
    return stale(e.problem, e.config, e.template_hash, e.measured_with);
  });
  dropped.trials = std::erase_if(*trials, [&](const TrialRecord& t) {
    return stale(t.problem, t.trial.config, t.template_hash, t.measured_with);
  });
  return dropped;
}

}  // namespace tgemm
