// DeviceInfo: the GPU a trial ran on, read through the CUDA runtime (never the driver library).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/core/arch_limits.h"

namespace tgemm {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H200"
  std::string arch;  // "sm_90"
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  ArchLimits limits;        // from the device itself
};

// Number of usable GPUs; 0 when there is no driver or no device (never throws).
int cuda_device_count();
// Reads the device's properties; throws Error when it does not exist.
DeviceInfo query_device(int ordinal);

}  // namespace tgemm
