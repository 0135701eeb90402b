// Static pruning: whether a compiled kernel fits the arch (registers, shared memory, spills),
// judged from the ptxas report before anything runs.
#pragma once

#include <optional>
#include <string>

#include "src/core/arch_limits.h"
#include "src/jit/compiled_kernel.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

// Why the kernel cannot run well or at all on `limits`, or nullopt when it fits.
// `block` is what the config's family says one block needs (threads, dynamic shared memory).
std::optional<std::string> resource_violation(const CompiledKernel& kernel,
                                              const BlockResources& block,
                                              const ArchLimits& limits);

}  // namespace tgemm
