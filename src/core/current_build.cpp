#include "src/core/current_build.h"

#include <fmt/format.h>

#include <optional>

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
  // Entries first, so the example names a stale best where there is one.
  std::vector<bool> entry_stale;
  for (const BestEntry& e : *entries)
    entry_stale.push_back(stale(e.problem, e.config, e.template_hash, e.measured_with));
  dropped.trials = std::erase_if(*trials, [&](const TrialRecord& t) {
    return stale(t.problem, t.trial.config, t.template_hash, t.measured_with);
  });
  // One best per problem and device (the database's key): a stale one is replaced or dropped.
  std::vector<BestEntry> kept;
  for (size_t i = 0; i < entries->size(); ++i) {
    if (!entry_stale[i]) {
      kept.push_back(std::move((*entries)[i]));
      // Our own kernel beside a vendor best is evidence for other shapes: only while current.
      BestEntry& e = kept.back();
      if (e.tgemm_best &&
          current.stale_reason(e.tgemm_best->config.template_name, e.tgemm_best_hash, {}))
        e.tgemm_best.reset();
    } else if (auto runner_up = current_runner_up((*entries)[i], *trials)) {
      kept.push_back(std::move(*runner_up));
      ++dropped.replaced;
    } else {
      ++dropped.entries;
    }
  }
  *entries = std::move(kept);
  return dropped;
}

}  // namespace tgemm
