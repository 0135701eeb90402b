#include "src/dispatch/tuned_device.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace tgemm {

std::vector<TunedDevice> tuned_device_candidates(const DeviceInfo& here,
                                                 const std::vector<DeviceInfo>& stored) {
  std::vector<TunedDevice> out;
  for (const DeviceInfo& d : stored) {
    if (d.arch != here.arch) continue;
    const TunedDeviceMatch match = d.name == here.name ? TunedDeviceMatch::same_gpu
                                   : d.sm_count == here.sm_count
                                       ? TunedDeviceMatch::same_arch_and_sms
                                       : TunedDeviceMatch::same_arch;
    out.push_back({d, match});
  }
  const auto rank = [&](const TunedDevice& t) {
    return std::make_tuple(int(t.match), std::abs(t.device.sm_count - here.sm_count), t.device.name,
                           t.device.sm_count);
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const TunedDevice& a, const TunedDevice& b) { return rank(a) < rank(b); });
  return out;
}

std::string describe(TunedDeviceMatch match) {
  switch (match) {
    case TunedDeviceMatch::same_gpu:
      return "this GPU";
    case TunedDeviceMatch::same_arch_and_sms:
      return "another GPU of the same arch and SM count";
    case TunedDeviceMatch::same_arch:
      return "another GPU of the same arch";
  }
  return "another GPU";
}

}  // namespace tgemm
