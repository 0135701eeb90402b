// gemv_simt's two loops without a GPU: the parameters that shape only one of them (KLANES for
// the large operand contiguous along K; STAGES and PREFETCH along L) are refused where the
// other loop runs, so the tuner never builds one kernel twice; the strip widths and the
// shared memory that each loop's plan launches with, and which plans keep state in the module.
#include <gtest/gtest.h>

#include "src/templates/template_registry.h"
#include "tests/common/gemv_configs.h"

namespace tgemm {
namespace {

// The shared test config (PREFETCH, STAGES and KLANES at their defaults 1, 0 and 32), 16 rows.
KernelConfig gemv(std::initializer_list<std::pair<const char*, int64_t>> overrides = {}) {
  KernelConfig c = testing::gemv_config(0, 16, 4, 8, 512, 1, 2);
  for (const auto& [name, value] : overrides) c.set(name, value);
  return c;
}

// M = 16: B is the large operand, contiguous along N for NN (the loop along L), along K for NT.
const Problem kAlongL = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 4096);
const Problem kAlongK = Problem::packed(GemmTypes{}, Op::N, Op::T, 16, 4096, 4096);

std::string refusal(const KernelConfig& c, const Problem& p) {
  return template_named("gemv_simt").unsupported_reason(c, p, "sm_90").value_or("");
}

TEST(GemvSimtLoops, klanes_runs_along_k_and_is_refused_along_l) {
  EXPECT_EQ(refusal(gemv({{"KLANES", 8}}), kAlongK), "");
  EXPECT_NE(refusal(gemv({{"KLANES", 8}}), kAlongL).find("KLANES=8 builds the same kernel"),
            std::string::npos);
  EXPECT_NE(refusal(gemv({{"KLANES", 2}}), kAlongK).find("KLANES=2 is not 4, 8, 16 or 32"),
            std::string::npos);
}

TEST(GemvSimtLoops, stages_runs_along_l_and_is_refused_along_k_and_without_prefetch) {
  EXPECT_EQ(refusal(gemv({{"STAGES", 3}}), kAlongL), "");
  EXPECT_NE(refusal(gemv({{"STAGES", 3}}), kAlongK).find("STAGES=3 builds the same kernel"),
            std::string::npos);
  EXPECT_NE(refusal(gemv({{"STAGES", 3}, {"PREFETCH", 0}}), kAlongL).find("PREFETCH=0 builds"),
            std::string::npos);
  EXPECT_NE(refusal(gemv({{"STAGES", 1}}), kAlongL).find("STAGES=1 is not 0 or 2..4"),
            std::string::npos);
}

// Along K a lane holds LW*ROWS sums, along L LW*ROWS*VEC: 16 rows of 4-wide vectors leave
// room for one vector per lane along L, and four rows per lane group along K.
TEST(GemvSimtLoops, accumulator_limit_is_the_loops_own) {
  EXPECT_EQ(refusal(gemv({{"LW", 4}, {"KLANES", 8}}), kAlongK), "");
  EXPECT_NE(refusal(gemv({{"LW", 2}}), kAlongL).find("LW*ROWS*VEC = 128 accumulators"),
            std::string::npos);
}

// A warp reads 32 / KLANES rows at a time, LW of them per lane group: the block's strip and
// the grid follow; the ring (STAGES) adds its slots behind the staged W.
TEST(GemvSimtLoops, strip_and_shared_memory_follow_klanes_and_stages) {
  const GemmTemplate& family = template_named("gemv_simt");
  // SPLIT_MODE=2: the main launch is the plan's only one.
  auto strips = [&](const KernelConfig& c) {
    const LaunchPlan plan = family.plan_launch(c, kAlongK);
    EXPECT_EQ(plan.count, 1);
    return plan.launches[0].grid[0];
  };
  EXPECT_EQ(strips(gemv()), 4096u / 8);
  EXPECT_EQ(strips(gemv({{"KLANES", 8}, {"LW", 2}})), 4096u / (8 * 4 * 2));
  // A 16-row block is sized for W in rows of 20 floats (its largest layout, below); a launch
  // takes what its layout's build stages, W as 16 rows of KB here.
  EXPECT_EQ(family.block_resources(gemv()).dynamic_smem_bytes, 20u * 512 * 4);
  EXPECT_EQ(family.plan_launch(gemv(), kAlongK).launches[0].smem_bytes, 16u * 512 * 4);
  EXPECT_EQ(family.plan_launch(gemv({{"STAGES", 3}}), kAlongL).launches[0].smem_bytes,
            (16u * 512 + 3 * 8 * 4 * 32 * 4) * 4);
}

// W stored along S on the loop along K (M = 16 with A transposed and B too; N = 16 NN) is
// staged in its stored order, KB rows of 20 floats; 8 rows keep ROWS rows of KB.
TEST(GemvSimtLoops, w_stored_along_s_on_the_loop_along_k_takes_rows_of_20_floats) {
  const GemmTemplate& family = template_named("gemv_simt");
  const auto smem = [&](const KernelConfig& c, const Problem& p) {
    return family.plan_launch(c, p).launches[0].smem_bytes;
  };
  const Problem tt = Problem::packed(GemmTypes{}, Op::T, Op::T, 16, 4096, 4096);
  const Problem n16 = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 16, 4096);
  const KernelConfig side1 = testing::gemv_config(1, 16, 4, 8, 512, 1, 2);
  EXPECT_EQ(smem(gemv(), tt), 20u * 512 * 4);
  EXPECT_EQ(smem(side1, n16), 20u * 512 * 4);
  EXPECT_EQ(smem(testing::gemv_config(1, 8, 4, 8, 512, 1, 2), n16), 8u * 512 * 4);
  EXPECT_EQ(family.block_resources(testing::gemv_config(1, 8, 4, 8, 512, 1, 2)).dynamic_smem_bytes,
            8u * 512 * 4);
}

// SPLIT_MODE=3 meets a strip's K slices in one cluster of CLUSTER blocks (sm_90): refused on
// earlier archs, for K past CLUSTER slices of KB, and for a CLUSTER size without it; its plan is
// one launch of CLUSTER grid rows (the slices past K empty) with no workspace.
TEST(GemvSimtLoops, cluster_mode_needs_sm_90_and_k_within_its_slices) {
  const KernelConfig cluster = gemv({{"SPLIT_MODE", 3}, {"CLUSTER", 8}});  // KB=512: K <= 4096
  EXPECT_EQ(refusal(cluster, kAlongL), "");
  EXPECT_EQ(refusal(cluster, kAlongK), "");
  const GemmTemplate& family = template_named("gemv_simt");
  EXPECT_NE(family.unsupported_reason(cluster, kAlongL, "sm_80")
                .value_or("")
                .find("SPLIT_MODE=3 needs thread block clusters (sm_90+), not sm_80"),
            std::string::npos);
  const Problem deep = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 4097);
  EXPECT_NE(refusal(cluster, deep)
                .find("at most CLUSTER=8 K slices in one cluster; K = 4097 "
                      "needs 9 of KB=512"),
            std::string::npos);
  EXPECT_NE(refusal(gemv({{"CLUSTER", 4}}), kAlongL)
                .find("CLUSTER=4 needs SPLIT_MODE=3 (have SPLIT_MODE=2)"),
            std::string::npos);
  EXPECT_NE(refusal(gemv({{"SPLIT_MODE", 3}}), kAlongL).find("needs CLUSTER of 2, 4 or 8"),
            std::string::npos);

  const Problem shallow = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 1000);
  const LaunchPlan plan = family.plan_launch(cluster, shallow);
  ASSERT_EQ(plan.count, 1);
  EXPECT_EQ(plan.launches[0].grid[1], 8u);
  EXPECT_EQ(plan.launches[0].grid[0], 4096u / 128);
  EXPECT_EQ(plan.workspace_bytes, 0u);
}

// Atomic slices (0) and the last-block reduction (2) count arrivals per strip in the loaded
// module, so the dispatcher runs their calls in turn across streams; one K slice counts nothing,
// and SPLIT_MODE 1 (a reduction launch) and 3 (a cluster) keep no state between calls.
TEST(GemvSimtLoops, only_the_counting_modes_keep_state_in_the_module) {
  const GemmTemplate& family = template_named("gemv_simt");
  const Problem one_slice = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 512);
  for (int64_t mode : {0, 1, 2}) {
    const KernelConfig c = gemv({{"SPLIT_MODE", mode}});
    EXPECT_EQ(family.plan_launch(c, kAlongL).module_state, mode != 1) << "SPLIT_MODE " << mode;
    EXPECT_FALSE(family.plan_launch(c, one_slice).module_state) << "SPLIT_MODE " << mode;
  }
  const Problem shallow = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 1000);
  EXPECT_FALSE(family.plan_launch(gemv({{"SPLIT_MODE", 3}, {"CLUSTER", 8}}), shallow).module_state);
}

// The last-block reduction (2) is the one whose length a thread walks alone: per slice, its share
// of the strip's S x TILE_L outputs. 16x4096x4096 in eight 512-deep slices: a strip of 128
// outputs along L times 16 rows over 256 threads, 8 each; along K (NT) the strip is the warps'
// rows of X (8 warps x 1 row each for KLANES=32). Atomics (0), a reduction launch (1), a
// cluster (3) and one slice read nothing back.
TEST(GemvSimtLoops, only_the_last_block_reduction_reads_partials_back_in_turn) {
  const GemmTemplate& family = template_named("gemv_simt");
  EXPECT_EQ(family.describe(gemv({{"SPLIT_MODE", 2}}), kAlongL).serial_partial_reads, 8 * 8);
  EXPECT_EQ(family.describe(gemv({{"SPLIT_MODE", 2}}), kAlongK).serial_partial_reads, 8 * 1);
  for (int64_t mode : {0, 1})
    EXPECT_EQ(family.describe(gemv({{"SPLIT_MODE", mode}}), kAlongL).serial_partial_reads, 0);
  const Problem one_slice = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 512);
  EXPECT_EQ(family.describe(gemv({{"SPLIT_MODE", 2}}), one_slice).serial_partial_reads, 0);
  const Problem shallow = Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 1000);
  EXPECT_EQ(
      family.describe(gemv({{"SPLIT_MODE", 3}, {"CLUSTER", 8}}), shallow).serial_partial_reads, 0);
  // Rows past the problem's small side and a strip cut by L are not summed: M = 2, N = 100.
  const Problem narrow = Problem::packed(GemmTypes{}, Op::N, Op::N, 2, 100, 4096);
  EXPECT_EQ(family.describe(gemv({{"SPLIT_MODE", 2}}), narrow).serial_partial_reads, 8 * 1);
}

}  // namespace
}  // namespace tgemm
