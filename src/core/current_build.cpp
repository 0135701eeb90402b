#include "src/core/current_build.h"

#include <fmt/format.h>

#include <optional>
#include <set>

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

namespace {

// The fastest current ok trial of a stale best's problem on its device, as that problem's best:
// its other kernels' times still hold (one family's source change leaves another family's
// runner-up current), so the shape stays tuned rather than falling to the untuned path.
std::optional<BestEntry> current_runner_up(const BestEntry& stale,
                                           const std::vector<TrialRecord>& current) {
  const std::string key = stale.problem.key();
  const TrialRecord* fastest = nullptr;
  for (const TrialRecord& t : current) {
    if (t.trial.status != TrialStatus::ok || t.trial.time_median_us <= 0) continue;
    if (t.device_name != stale.device_name || t.arch != stale.arch || t.problem.key() != key)
      continue;
    if (!fastest || t.trial.time_median_us < fastest->trial.time_median_us) fastest = &t;
  }
  if (!fastest) return std::nullopt;
  BestEntry e = stale;  // the problem, device, cuBLAS time and trial count stay
  e.config = fastest->trial.config;
  e.template_hash = fastest->template_hash;
  e.trial = fastest->trial;
  e.measured_with = fastest->measured_with;
  return e;
}

}  // namespace

StaleDropped drop_stale(const CurrentBuild& current, std::vector<BestEntry>* entries,
                        std::vector<TrialRecord>* trials) {
  StaleDropped dropped;
  auto stale = [&](const Problem& problem, const KernelConfig& config, const std::string& hash,
                   const MeasuredWith& with) {
    auto why = current.stale_reason(config.template_name, hash, with);
    if (why && dropped.example.empty()) dropped.example = problem.key() + ": " + *why;
    return why.has_value();
  };
  auto where = [](const BestEntry& e) {
    return e.problem.key() + "|" + e.device_name + "|" + e.arch;
  };
  std::set<std::string> current_best;  // problem and device of every entry that stays as it is
  std::vector<size_t> stale_at;
  for (size_t i = 0; i < entries->size(); ++i) {
    const BestEntry& e = (*entries)[i];
    if (stale(e.problem, e.config, e.template_hash, e.measured_with))
      stale_at.push_back(i);
    else
      current_best.insert(where(e));
  }
  dropped.trials = std::erase_if(*trials, [&](const TrialRecord& t) {
    return stale(t.problem, t.trial.config, t.template_hash, t.measured_with);
  });
  std::vector<bool> drop(entries->size(), false);
  for (size_t i : stale_at) {
    BestEntry& e = (*entries)[i];
    auto runner_up = current_best.count(where(e)) ? std::nullopt : current_runner_up(e, *trials);
    if (runner_up) {
      e = std::move(*runner_up);
      ++dropped.replaced;
    } else {
      drop[i] = true;
      ++dropped.entries;
    }
  }
  size_t at = 0;
  std::erase_if(*entries, [&](const BestEntry&) { return drop[at++]; });
  return dropped;
}

}  // namespace tgemm
