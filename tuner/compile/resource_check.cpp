#include "tuner/compile/resource_check.h"

#include <fmt/format.h>

namespace tgemm {

std::optional<std::string> resource_violation(const CompiledKernel& kernel,
                                              const BlockResources& block,
                                              const ArchLimits& limits) {
  const PtxasResources& r = kernel.resources;
  if (!r.found) return "ptxas reported no resource usage for the kernel";
  if (r.spill_store_bytes > 0 || r.spill_load_bytes > 0)
    return fmt::format("spills registers ({} bytes stored, {} loaded)", r.spill_store_bytes,
                       r.spill_load_bytes);
  if (r.wgmma_serialized)
    return "ptxas serializes its wgmma instructions (a wgmma's accumulators are touched while it "
           "is in flight): the tensor cores would run one wgmma at a time";
  const int threads = block.threads;
  if (int64_t(r.registers) * threads > limits.regs_per_block)
    return fmt::format("{} registers x {} threads exceeds {} registers per block", r.registers,
                       threads, limits.regs_per_block);
  const size_t smem = size_t(r.smem_bytes) + block.dynamic_smem_bytes;
  if (smem > size_t(limits.smem_per_block_optin))
    return fmt::format("{} bytes of shared memory exceeds the {} bytes a block may have", smem,
                       limits.smem_per_block_optin);
  return std::nullopt;
}

}  // namespace tgemm
