// Which GPU's tuning serves a device: its own, else another GPU's of the same arch. A kernel
// built for an arch runs on every GPU of it, and where the SM count (so the waves a grid makes)
// is the same, the order of measured times carries over; an H200's database then serves an
// H100 (both sm_90, 132 SMs) instead of the defaults. CLBlast falls back the same way
// (device, then architecture, then defaults).
#pragma once

#include <string>
#include <vector>

#include "src/core/device_info.h"

namespace tgemm {

enum class TunedDeviceMatch {
  same_gpu,           // this GPU's own name and arch
  same_arch_and_sms,  // another GPU of this arch and SM count
  same_arch,          // another GPU of this arch (nearest SM count first)
};

struct TunedDevice {
  DeviceInfo device;  // as the database stores it (name, arch, SM count)
  TunedDeviceMatch match;
};

// The database's GPUs that may serve `here`, best match first (equal matches by name, so the
// order never depends on the file's row order); GPUs of other archs are not candidates.
std::vector<TunedDevice> tuned_device_candidates(const DeviceInfo& here,
                                                 const std::vector<DeviceInfo>& stored);

// "this GPU", "another GPU of the same arch and SM count", "another GPU of the same arch".
std::string describe(TunedDeviceMatch match);

}  // namespace tgemm
