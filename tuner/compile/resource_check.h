// Static pruning: whether a compiled kernel fits the arch (registers, shared memory, spills),
// judged from the ptxas report before anything runs.
#pragma once

#include <optional>
#include <string>

#include "src/core/arch_limits.h"
#include "src/core/kernel_config.h"
#include "src/jit/compiled_kernel.h"

namespace tgemm {

// Why the kernel cannot run well or at all on `limits`, or nullopt when it fits.
std::optional<std::string> resource_violation(const CompiledKernel& kernel,
                                              const KernelConfig& config, const ArchLimits& limits);

}  // namespace tgemm
