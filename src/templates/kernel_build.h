// What to compile for one config of a family and one problem variant (layout and types),
// and its cache key: the one place where the tuner and the dispatcher turn a config into
// NVRTC input, so both always build (and find) the same cubin.
#pragma once

#include <string>

#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/jit/compiled_kernel.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

std::string kernel_cache_key(const GemmTemplate& family, const KernelConfig& config,
                             const Problem& variant, const std::string& arch);
// The variant a compiled kernel was built for (layout, types, batch form, epilogue), as
// build_variant gives it: what rebuilding its config must be given.
Problem built_variant(const CompiledKernel& kernel);
// Never throws for a bad config: a failed compile is ok == false with the log.
CompiledKernel build_kernel(const GemmTemplate& family, const KernelConfig& config,
                            const Problem& variant, const std::string& arch);

}  // namespace tgemm
