// MeasuredWith: the software a trial was measured under, beyond the kernel's own source: the
// NVRTC that compiled it and the CUDA driver that ran it. A trial whose versions differ from
// the running build's is stale (src/templates/staleness.h): its time may no longer hold.
#pragma once

#include <string>

namespace tgemm {

struct MeasuredWith {
  std::string nvrtc_version;  // "13.0"; empty: not recorded (a trial from before schema 6)
  int driver_version = 0;     // cudaDriverGetVersion, 13000; 0: not recorded

  bool operator==(const MeasuredWith&) const = default;
};

}  // namespace tgemm
