// Occupancy from a kernel's resources, by the occupancy calculator's rules.
#include "src/core/occupancy.h"

#include <gtest/gtest.h>

namespace tgemm {
namespace {

TEST(Occupancy, each_resource_can_be_the_limit) {
  const ArchLimits h = arch_limits("sm_90");
  // 256 threads at 127 registers (allocated as 128): 32768 per block, two fit 65536.
  Occupancy o = occupancy(h, 256, 127, 16896);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "registers");
  EXPECT_DOUBLE_EQ(o.warps_fraction, 16.0 / 64.0);
  // 254 registers: one block (cuBLAS's 256x128 FFMA kernel).
  EXPECT_EQ(occupancy(h, 256, 254, 0).blocks_per_sm, 1);
  // 100 KB of shared memory plus the 1 KB reserve: two fit 228 KB.
  o = occupancy(h, 128, 32, 100 * 1024);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "shared memory");
  // Small blocks stop at the 32 blocks an SM holds.
  o = occupancy(h, 32, 16, 0);
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limited_by, "blocks per SM");
  // 1024-thread blocks: 2048 threads per SM.
  o = occupancy(h, 1024, 16, 0);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "threads");
}

TEST(Occupancy, a_block_that_cannot_fit_gets_zero) {
  const ArchLimits t4 = arch_limits("sm_75");
  EXPECT_EQ(occupancy(t4, 256, 32, 65 * 1024).blocks_per_sm, 0);  // over the 64 KB opt-in
  EXPECT_EQ(occupancy(t4, 2048, 32, 0).blocks_per_sm, 0);         // over 1024 threads
  EXPECT_EQ(occupancy(t4, 1024, 255, 0).blocks_per_sm, 0);        // 256K registers
  EXPECT_EQ(occupancy(t4, 64, 16, 0).blocks_per_sm, 16);          // sm_75 holds 16 blocks
}

}  // namespace
}  // namespace tgemm
