// DeviceCeiling: one measured roof of a GPU (copy bandwidth or a peak FLOP rate), stored per
// device (table device_ceilings) so a roofline places each kernel against what was reached.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tgemm {

// The kinds a device_ceilings row holds: "copy_bandwidth" (bytes/s) and the FLOP/s roofs
// "f32_ffma", "f16", "bf16", "tf32" (the tensor types the tuner tunes).
inline constexpr const char* kCopyBandwidthCeiling = "copy_bandwidth";
inline constexpr const char* kFfmaCeiling = "f32_ffma";

struct DeviceCeiling {
  DeviceCeiling() = default;
  DeviceCeiling(std::string kind_, double value_, std::string source_, std::string detail_)
      : kind(std::move(kind_)),
        value(value_),
        source(std::move(source_)),
        detail(std::move(detail_)) {}

  std::string kind;
  double value = 0;               // bytes/s for copy_bandwidth, FLOP/s otherwise
  std::string source;             // how it was reached: "cudaMemcpyAsync", "nvrtc_ffma_kernel", ...
  std::string detail;             // the size measured, e.g. "1 GiB, median of 20"
  std::string device_name, arch;  // filled when read back from a database
  std::string measured_at;        // UTC ISO-8601, filled when read back
};

// The peak-rate roofs of a list (every kind but copy_bandwidth).
inline std::vector<DeviceCeiling> compute_ceilings(const std::vector<DeviceCeiling>& all) {
  std::vector<DeviceCeiling> out;
  for (const DeviceCeiling& c : all)
    if (c.kind != kCopyBandwidthCeiling) out.push_back(c);
  return out;
}

}  // namespace tgemm
