// The CurrentBuild of this library: every registered family's device-code hash and the NVRTC
// it links, for the GPU whose driver is `driver_version` (0: not known, not compared).
#pragma once

#include "src/core/current_build.h"

namespace tgemm {

CurrentBuild this_build(int driver_version);

}  // namespace tgemm
