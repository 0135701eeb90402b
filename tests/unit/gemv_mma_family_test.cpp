// gemv_mma's host side: which problems and types it takes (M <= 16, B stored K x N and 16-byte
// aligned, f32 as tf32 or f32x3 on sm_80+), its launches (C scaled by beta before K slices add
// into it) and what it tells the selector.
#include <gtest/gtest.h>

#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

const GemmTemplate& family() { return template_named("gemv_mma"); }

KernelConfig config(int64_t warps, int64_t lw, int64_t kb) {
  return KernelConfig::from_params_text(
      "gemv_mma",
      "WARPS=" + std::to_string(warps) + ",LW=" + std::to_string(lw) + ",KB=" + std::to_string(kb));
}

Problem accurate(Op a, Op b, int64_t m, int64_t n, int64_t k) {
  return Problem::packed(parse_gemm_types("f32x3"), a, b, m, n, k);
}

TEST(GemvMmaFamily, takes_up_to_16_rows_with_b_along_n_as_tf32_or_f32x3_on_sm_80_and_later) {
  const KernelConfig c = config(4, 1, 256);
  EXPECT_EQ(family().unsupported_reason(c, accurate(Op::N, Op::N, 16, 4096, 4096), "sm_90"),
            std::nullopt);
  EXPECT_EQ(family().unsupported_reason(c, accurate(Op::T, Op::N, 1, 1000, 7), "sm_80"),
            std::nullopt);
  Problem tf32 = accurate(Op::N, Op::N, 16, 4096, 4096);
  tf32.types = parse_gemm_types("tf32");
  EXPECT_EQ(family().unsupported_reason(c, tf32, "sm_80"), std::nullopt);

  const auto refused = [&](const Problem& p, const std::string& arch, const std::string& words) {
    const auto why = family().unsupported_reason(c, p, arch);
    ASSERT_TRUE(why.has_value()) << words;
    EXPECT_NE(why->find(words), std::string::npos) << *why;
  };
  refused(accurate(Op::N, Op::N, 17, 4096, 4096), "sm_90", "M <= 16");
  refused(accurate(Op::N, Op::T, 16, 4096, 4096), "sm_90", "along N");
  Problem misaligned = accurate(Op::N, Op::N, 16, 4095, 4096);
  misaligned.align_b = 4;
  refused(misaligned, "sm_90", "aligned to 16 bytes");
  refused(Problem::packed(GemmTypes{}, Op::N, Op::N, 16, 4096, 4096), "sm_90", "tf32 or f32x3");
  refused(accurate(Op::N, Op::N, 16, 4096, 4096), "sm_75", "sm_80");
  refused(accurate(Op::N, Op::N, 16, 4096, int64_t(256) * 70000), "sm_90", "slices");
}

TEST(GemvMmaFamily, k_slices_add_into_c_after_it_is_scaled_by_beta) {
  const KernelConfig c = config(4, 2, 256);  // 256 columns of C per block
  const LaunchPlan split = family().plan_launch(c, accurate(Op::N, Op::N, 16, 4096, 1000));
  ASSERT_EQ(split.count, 2);
  EXPECT_EQ(family().entries(c)[size_t(split.launches[0].entry)], "gemv_mma_prepare_c");
  const KernelLaunch& main = split.launches[1];
  EXPECT_EQ(main.entry, 0);
  EXPECT_EQ(main.grid[0], 16u);  // 4096 / 256
  EXPECT_EQ(main.grid[1], 4u);   // ceil(1000 / 256)
  EXPECT_EQ(main.block[0], 128u);
  EXPECT_EQ(main.smem_bytes, size_t(256 / 8) * 32 * 16 * 2);  // big and small parts of A
  EXPECT_EQ(split.workspace_bytes, 0u);

  const LaunchPlan whole = family().plan_launch(c, accurate(Op::N, Op::N, 16, 300, 256));
  ASSERT_EQ(whole.count, 1);  // one slice stores C (alpha, beta) itself
  EXPECT_EQ(whole.launches[0].entry, 0);
  EXPECT_EQ(whole.launches[0].grid[0], 2u);  // ceil(300 / 256)
}

TEST(GemvMmaFamily, streams_its_bytes_over_sixteen_rows_for_the_selector) {
  const KernelConfig c = config(8, 4, 512);
  EXPECT_TRUE(family().bandwidth_bound());
  const TileShape t = family().tile(c);
  EXPECT_EQ(t.m, 16);
  EXPECT_EQ(t.n, 32 * 8 * 4);
  EXPECT_EQ(t.k, 512);
  // ptxas on sm_90 (session 23): 62, 94 and 165 registers for LW = 1, 2, 4.
  const Problem p = accurate(Op::N, Op::N, 16, 4096, 4096);
  EXPECT_NEAR(family().estimated_registers(config(4, 1, 256), p), 62, 8);
  EXPECT_NEAR(family().estimated_registers(config(4, 2, 256), p), 94, 8);
  EXPECT_NEAR(family().estimated_registers(config(4, 4, 256), p), 165, 10);
}

}  // namespace
}  // namespace tgemm
