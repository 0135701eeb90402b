// The worker's measurement of a device's roofs: device-to-device copy bandwidth, the FFMA
// peak (a small NVRTC kernel, or a large SGEMM when NVRTC fails) and cublasGemmEx's reached
// rate per tensor type the tuner tunes. A few seconds of GPU time, once per device.
#pragma once

#include "tuner/evaluate/evaluation_types.h"

namespace tgemm {

// Uses the current device; never throws (a failure is `error`, and what was reached stays).
CeilingMeasurements measure_ceilings(int device);

}  // namespace tgemm
