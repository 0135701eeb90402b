// NvrtcCompiler: a kernel source + its -D list -> cubin for one arch, with the resource
// report of its main entry; thread-safe, so the tuner compiles many configs at once.
// Template-agnostic: src/templates/kernel_build.h says what to compile for a config.
#pragma once

#include <string>
#include <vector>

#include "src/jit/compiled_kernel.h"
#include "src/jit/kernel_source.h"

namespace tgemm {

class NvrtcCompiler {
 public:
  // "13.0"
  static std::string version();

  // Every NVRTC option for this compile: arch, language, resource report, then `defines`.
  // `arch` is sm_XY or an arch-specific sm_XYa. Throws Error on a malformed arch.
  static std::vector<std::string> options(const std::vector<std::string>& defines,
                                          const std::string& arch);
  // Same inputs -> same key: source hash (template and headers), options, arch and NVRTC
  // version (as jitify and cupy do).
  static std::string cache_key(const KernelSource& source, const std::vector<std::string>& defines,
                               const std::string& arch);

  // Never throws for a bad source or define: failures come back with ok == false, the log,
  // the options and `display_name`. `entry` is the kernel whose resources are read.
  static CompiledKernel compile(const KernelSource& source, const std::vector<std::string>& defines,
                                const std::string& entry, const std::string& arch,
                                const std::string& display_name);
};

}  // namespace tgemm
