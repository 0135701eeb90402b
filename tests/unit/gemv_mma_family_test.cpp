// gemv_mma's host side: which problems and types it takes (a small side of at most 16, the large
// operand 16-byte aligned, f32 as tf32 or f32x3 on sm_80+), its launches (C scaled by beta before
// K slices add into it) and what it tells the selector.
#include <gtest/gtest.h>

#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

const GemmTemplate& family() { return template_named("gemv_mma"); }

KernelConfig config(int64_t side, int64_t warps, int64_t lw, int64_t kb) {
  return KernelConfig::from_params_text(
      "gemv_mma", "SIDE=" + std::to_string(side) + ",WARPS=" + std::to_string(warps) +
                      ",LW=" + std::to_string(lw) + ",KB=" + std::to_string(kb));
}

Problem accurate(Op a, Op b, int64_t m, int64_t n, int64_t k) {
  return Problem::packed(parse_gemm_types("f32x3"), a, b, m, n, k);
}

void expect_refused(const KernelConfig& c, const Problem& p, const std::string& arch,
                    const std::string& words) {
  const auto why = family().unsupported_reason(c, p, arch);
  ASSERT_TRUE(why.has_value()) << words;
  EXPECT_NE(why->find(words), std::string::npos) << *why;
}

TEST(GemvMmaFamily, takes_a_small_side_up_to_16_in_every_layout_as_tf32_or_f32x3_on_sm_80_on) {
  const KernelConfig small_m = config(0, 4, 1, 256), small_n = config(1, 4, 1, 256);
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      EXPECT_EQ(family().unsupported_reason(small_m, accurate(a, b, 16, 4096, 4096), "sm_90"),
                std::nullopt);
      EXPECT_EQ(family().unsupported_reason(small_n, accurate(a, b, 4096, 16, 4096), "sm_80"),
                std::nullopt);
    }
  Problem tf32 = accurate(Op::N, Op::N, 1, 1000, 7);
  tf32.types = parse_gemm_types("tf32");
  EXPECT_EQ(family().unsupported_reason(small_m, tf32, "sm_80"), std::nullopt);

  expect_refused(small_m, accurate(Op::N, Op::N, 17, 4096, 4096), "sm_90", "M <= 16");
  expect_refused(small_n, accurate(Op::N, Op::N, 4096, 17, 4096), "sm_90", "N <= 16");
  Problem misaligned = accurate(Op::N, Op::N, 16, 4095, 4096);
  misaligned.align_b = 4;
  expect_refused(small_m, misaligned, "sm_90", "B (the large operand)");
  misaligned = accurate(Op::N, Op::N, 4095, 16, 4095);
  misaligned.align_a = 4;
  expect_refused(small_n, misaligned, "sm_90", "A (the large operand)");
  expect_refused(small_m, Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 4096), "sm_90",
                 "computes tf32, f32x3, not f32");
  expect_refused(small_m, accurate(Op::N, Op::N, 16, 4096, 4096), "sm_75", "sm_80");
  expect_refused(small_m, accurate(Op::N, Op::N, 16, 4096, int64_t(256) * 70000), "sm_90",
                 "slices");
}

TEST(GemvMmaFamily, k_slices_add_into_c_after_it_is_scaled_by_beta) {
  const KernelConfig c = config(0, 4, 2, 256);
  // B stored K x N (along L): 32 values per group, 256 per block.
  const LaunchPlan split = family().plan_launch(c, accurate(Op::N, Op::N, 16, 4096, 1000));
  ASSERT_EQ(split.count, 2);
  EXPECT_EQ(family().entries(c)[size_t(split.launches[0].entry)], "gemv_mma_prepare_c");
  const KernelLaunch& main = split.launches[1];
  EXPECT_EQ(main.entry, 0);
  EXPECT_EQ(main.grid[0], 16u);  // 4096 / 256
  EXPECT_EQ(main.grid[1], 4u);   // ceil(1000 / 256)
  EXPECT_EQ(main.block[0], 128u);
  EXPECT_EQ(main.smem_bytes, size_t(256 / 8) * 32 * 16 * 2);  // big and small parts of W
  EXPECT_EQ(split.workspace_bytes, 0u);
  // B stored N x K (along K): n tiles of 8, 64 per block.
  EXPECT_EQ(family().plan_launch(c, accurate(Op::N, Op::T, 16, 4096, 1000)).launches[1].grid[0],
            64u);
  // N small: the strip runs along M.
  EXPECT_EQ(family()
                .plan_launch(config(1, 4, 2, 256), accurate(Op::N, Op::N, 4096, 16, 1000))
                .launches[1]
                .grid[0],
            64u);

  const LaunchPlan whole = family().plan_launch(c, accurate(Op::N, Op::N, 16, 300, 256));
  ASSERT_EQ(whole.count, 1);  // one slice stores C (alpha, beta) itself
  EXPECT_EQ(whole.launches[0].entry, 0);
  EXPECT_EQ(whole.launches[0].grid[0], 2u);  // ceil(300 / 256)
}

TEST(GemvMmaFamily, streams_its_bytes_over_sixteen_rows_for_the_selector) {
  const Problem along_l = accurate(Op::N, Op::N, 16, 4096, 4096);
  const Problem along_k = accurate(Op::N, Op::T, 16, 4096, 4096);
  const KernelDescription d = family().describe(config(0, 8, 4, 512), along_l);
  EXPECT_TRUE(d.bandwidth_bound);
  EXPECT_EQ(d.tile.m, 16);
  EXPECT_EQ(d.tile.n, 32 * 8 * 4);
  EXPECT_EQ(d.tile.k, 512);
  EXPECT_EQ(family().describe(config(1, 8, 4, 512), along_l).tile.n, 16);
  EXPECT_EQ(family().describe(config(0, 4, 1, 256), along_l).code_path, "along L");
  EXPECT_EQ(family().describe(config(0, 4, 1, 256), along_k).code_path, "along K");
  // ptxas on sm_90, f32x3, LW = 1, 2, 4: along L 62, 94, 166; along K 48, 80, 168.
  const auto registers = [&](int64_t lw, const Problem& p) {
    return family().describe(config(0, 4, lw, 256), p).estimated_registers;
  };
  EXPECT_NEAR(registers(1, along_l), 62, 8);
  EXPECT_NEAR(registers(2, along_l), 94, 8);
  EXPECT_NEAR(registers(4, along_l), 166, 10);
  EXPECT_NEAR(registers(1, along_k), 48, 8);
  EXPECT_NEAR(registers(2, along_k), 80, 8);
  EXPECT_NEAR(registers(4, along_k), 168, 25);
  // The twin of a SIDE=0 config is its SIDE=1 config.
  EXPECT_EQ(family().describe(config(0, 4, 1, 256), along_l).transposed->get("SIDE"), 1);
}

}  // namespace
}  // namespace tgemm
