// NvrtcCompiler: kernel template + config + layout -> cubin for one arch, with the
// resource report; thread-safe, so the tuner compiles many configs at once.
#pragma once

#include <string>
#include <vector>

#include "src/core/dtype.h"
#include "src/core/kernel_config.h"
#include "src/jit/compiled_kernel.h"
#include "src/jit/kernel_source.h"

namespace tgemm {

class NvrtcCompiler {
 public:
  // "13.0"
  static std::string version();

  // Every NVRTC option for this compile: arch, resource report, layout and config defines.
  static std::vector<std::string> options(const KernelConfig& config, Op op_a, Op op_b,
                                          const std::string& arch);
  // Same inputs -> same key: template hash, options, arch and NVRTC version (as jitify/cupy).
  static std::string cache_key(const KernelSource& source, const KernelConfig& config, Op op_a,
                               Op op_b, const std::string& arch);

  // Never throws for a bad config: failures come back with ok == false and the log.
  static CompiledKernel compile(const KernelSource& source, const KernelConfig& config, Op op_a,
                                Op op_b, const std::string& arch);
};

}  // namespace tgemm
