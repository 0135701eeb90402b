#include "tuner/report/kernel_fit.h"

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"
#include "src/templates/template_registry.h"

namespace tgemm {

std::optional<KernelFit> fit_of(TuningDb& db, const TrialRecord& t, const DeviceInfo& device) {
  const GemmTemplate* family = find_template(t.trial.config.template_name);
  if (!family) return std::nullopt;
  std::optional<BinaryRecord> binary;
  try {
    binary = db.find_binary_for(t.trial.config, t.template_hash, build_variant(t.problem),
                                device.arch, "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!binary || binary->status != BinaryStatus::ok) return std::nullopt;
  ArchLimits limits;
  try {
    limits = arch_limits(device.arch);
  } catch (const std::exception&) {
    return std::nullopt;  // an arch this build has no table for
  }
  KernelFit fit;
  const BlockResources block = family->block_resources(t.trial.config);
  fit.registers = binary->compiled.resources.registers;
  fit.smem_bytes = size_t(binary->compiled.resources.smem_bytes) + block.dynamic_smem_bytes;
  fit.threads = block.threads;
  fit.occupancy = occupancy(limits, fit.threads, fit.registers, fit.smem_bytes);
  if (family->unsupported_reason(t.trial.config, t.problem, device.arch)) return fit;
  const LaunchPlan plan = family->plan_launch(t.trial.config, t.problem, device.sm_count);
  for (const KernelLaunch& l : plan)
    if (l.entry == 0 && fit.occupancy.blocks_per_sm > 0 && device.sm_count > 0)
      fit.waves = double(l.grid[0]) * l.grid[1] * l.grid[2] /
                  (double(device.sm_count) * fit.occupancy.blocks_per_sm);
  return fit;
}

}  // namespace tgemm
