// Reads a kernel's resource usage from the cubin itself (ELF .nv.info attributes and the
// .nv.shared section), for cubins whose NVRTC log carries no ptxas report (seen on the GPU
// machine when NVRTC returns an identical earlier compile without running ptxas again).
#pragma once

#include <string>
#include <vector>

#include "src/jit/ptxas_log.h"

namespace tgemm {

// `found` is false when the cubin is not an ELF file or has no entry named `function`.
// Spills are not recorded in a cubin: a non-zero frame size (local memory) stands for them
// in spill_store_bytes, so the static pruning still rejects such a kernel.
// `arch`: the cubin's target ("sm_90"); Hopper cubins fold the 1 KiB of shared memory the
// system reserves per block into every kernel's .nv.shared section, which ptxas's report and
// the opt-in limit leave out, so it is taken off again.
PtxasResources read_cubin_resources(const std::vector<char>& cubin, const std::string& function,
                                    const std::string& arch);

}  // namespace tgemm
