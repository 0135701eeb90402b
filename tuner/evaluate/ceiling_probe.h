// The worker's measurement of a device's roofs: device-to-device copy bandwidth, the FFMA
// peak (a small NVRTC kernel, or a large SGEMM when NVRTC fails) and cublasGemmEx's reached
// rate per tensor type the tuner tunes. A few seconds of GPU time, once per device.
#pragma once

#include <vector>

#include "tuner/evaluate/evaluation_types.h"

namespace tgemm {

// Uses the current device; never throws (a failure is `error`, and what was reached stays).
CeilingMeasurements measure_ceilings(int device);

// A small measuring kernel's CUDA source (`file` names it in NVRTC's log) compiled by NVRTC for
// sm_<major><minor>; no GPU needed. Throws Error when NVRTC refuses it.
std::vector<char> probe_cubin(const char* source, const char* file, int major, int minor);

// The FFMA peak kernel (`ffma_peak`), through probe_cubin.
std::vector<char> ffma_probe_cubin(int major, int minor);

}  // namespace tgemm
