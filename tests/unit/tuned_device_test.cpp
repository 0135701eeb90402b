// Which GPU's tuning serves a device (src/dispatch/tuned_device.h): its own first, then GPUs
// of its arch and SM count, then of its arch by nearest SM count; never another arch.
#include "src/dispatch/tuned_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/common/devices.h"

namespace tgemm {
namespace {

using testing::device;

std::vector<std::string> names(const std::vector<TunedDevice>& candidates) {
  std::vector<std::string> out;
  for (const TunedDevice& c : candidates) out.push_back(c.device.name);
  return out;
}

TEST(TunedDevice, own_tuning_first_then_same_arch_and_sms_then_nearest_sms) {
  const DeviceInfo h100 = device("NVIDIA H100 80GB HBM3", "sm_90", 132);
  const std::vector<DeviceInfo> stored = {
      device("NVIDIA A100", "sm_80", 108),           device("NVIDIA H100 PCIe", "sm_90", 114),
      device("NVIDIA H200", "sm_90", 132),           device("NVIDIA H20", "sm_90", 78),
      device("NVIDIA H100 80GB HBM3", "sm_90", 132), device("NVIDIA GH200", "sm_90", 132)};
  const std::vector<TunedDevice> order = tuned_device_candidates(h100, stored);
  EXPECT_EQ(names(order),
            (std::vector<std::string>{"NVIDIA H100 80GB HBM3", "NVIDIA GH200", "NVIDIA H200",
                                      "NVIDIA H100 PCIe", "NVIDIA H20"}));
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0].match, TunedDeviceMatch::same_gpu);
  EXPECT_EQ(order[1].match, TunedDeviceMatch::same_arch_and_sms);
  EXPECT_EQ(order[2].match, TunedDeviceMatch::same_arch_and_sms);
  EXPECT_EQ(order[3].match, TunedDeviceMatch::same_arch);
  EXPECT_EQ(order[4].match, TunedDeviceMatch::same_arch);
  EXPECT_EQ(describe(order[2].match), "another GPU of the same arch and SM count");
}

TEST(TunedDevice, another_arch_is_never_a_candidate) {
  EXPECT_TRUE(tuned_device_candidates(
                  device("NVIDIA H100", "sm_90", 132),
                  {device("NVIDIA A100", "sm_80", 132), device("NVIDIA H100", "sm_90a", 132)})
                  .empty());
  EXPECT_TRUE(tuned_device_candidates(device("NVIDIA H100", "sm_90", 132), {}).empty());
}

// The order depends on the GPUs, not on the rows' order in the file.
TEST(TunedDevice, the_order_does_not_depend_on_the_rows_order) {
  const DeviceInfo here = device("NVIDIA L4", "sm_89", 58);
  std::vector<DeviceInfo> stored = {device("NVIDIA L40S", "sm_89", 142),
                                    device("NVIDIA RTX 4090", "sm_89", 128),
                                    device("NVIDIA L40", "sm_89", 142)};
  const std::vector<std::string> expected = {"NVIDIA RTX 4090", "NVIDIA L40", "NVIDIA L40S"};
  EXPECT_EQ(names(tuned_device_candidates(here, stored)), expected);
  std::reverse(stored.begin(), stored.end());
  EXPECT_EQ(names(tuned_device_candidates(here, stored)), expected);
}

}  // namespace
}  // namespace tgemm
