// gemm_mma on a GPU, through the evaluator (cuBLAS FP32 reference, FP64 for small problems,
// poisoned C): f16, bf16 (C in the input type or f32), tf32 and f32x3; the four layouts;
// odd and prime shapes; padded leading dimensions and pointers one element off; beta != 0;
// split-K. A one-pass f32x3 kernel must fail f32x3's accuracy bound. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "src/core/device_info.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/gpu/mma_gpu_harness.h"
#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

using testing::mma;

KernelConfig shifted(KernelConfig c) {
  c.set("SHIFT_COPY", 1);
  return c;
}

// Spans STAGES 2..5, VEC_BYTES 16/8/4/2 (cp.async and register staged), both shared
// layouts, 64..256 threads, split-K and swizzle; all legal in the space on sm_80+.
const std::vector<KernelConfig>& configs() {
  static const std::vector<KernelConfig> c = {
      mma(128, 128, 64, 64, 64, 3, 16, 1, 1, 8),          // 0: the f16 default
      mma(64, 64, 32, 32, 32, 2, 2, 0, 1, 1),             // 1: 2-byte copies, padded (16-bit only)
      mma(64, 128, 128, 32, 64, 5, 8, 0, 1, 1),           // 2: deep slices, 5 stages
      mma(128, 64, 64, 64, 32, 4, 4, 1, 1, 8),            // 3: 4-byte copies
      mma(64, 64, 64, 32, 32, 3, 16, 1, 4, 1),            // 4: split-K (f32 C only)
      mma(128, 128, 64, 64, 32, 2, 16, 0, 1, 1),          // 5: double buffer
      shifted(mma(128, 64, 64, 64, 32, 2, 16, 1, 1, 8)),  // 6: 16-byte copies at any alignment
      shifted(mma(64, 64, 128, 32, 32, 2, 16, 0, 1, 1)),  // 7: the same, padded, deep slices
      mma(128, 128, 32, 64, 64, 4, 16, 1, 1, 8),          // 8: one k-step per slice (odd)
      mma(256, 128, 128, 64, 64, 3, 16, 1, 1, 8),         // 9: the 8-warp aligned best
  };
  return c;
}

const auto& kTypes = testing::kMmaTypes;
GemmEvaluator& evaluator() { return testing::mma_evaluator(); }
const TimingOptions& kQuick = testing::kMmaQuick;

class GemmMmaGpu : public testing::MmaGpuTest {
 protected:
  GemmMmaGpu() : MmaGpuTest(configs()) {}
  const testing::MmaKernels& kernels() const override {
    static const testing::MmaKernels built(configs(), arch_);
    return built;
  }
};

Problem typed(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, float beta) {
  Problem p = Problem::packed(parse_gemm_types(kTypes[type]), a, b, m, n, k);
  p.beta_zero = beta == 0.0f;
  return p;
}

TEST_F(GemmMmaGpu, every_type_and_layout_is_correct_on_odd_prime_and_tiled_shapes) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  const std::vector<Shape> shapes = {
      {64, 64, 64}, {97, 61, 131}, {1, 7, 3}, {257, 300, 520}, {33, 513, 1000}};
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes) {
          run_case(type, typed(type, a, b, m, n, k, 0.0f), 1.0f, 0.0f);
          run_case(type, typed(type, a, b, m, n, k, 0.75f), -1.5f, 0.75f);
        }
  expect_no_failures();
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (size_t i : {0, 2, 3, 5})
      EXPECT_GT((ok_runs_[{type, i}]), 0) << kTypes[type] << " " << configs()[i].canonical_name();
  for (size_t type : {1, 3, 4, 5})
    EXPECT_GT((ok_runs_[{type, 4}]), 0) << "split-K, " << kTypes[type];
  for (size_t type : {0, 1, 2, 3})
    EXPECT_GT((ok_runs_[{type, 1}]), 0) << "2-byte, " << kTypes[type];
}

// Interior blocks run the double-buffered loop, then hand over to the bounded copies for the
// last slices; edge blocks and split-K slices run the bounded loop only. One k-step per slice
// (config 8) alternates the fragment buffers between slices, from an odd or even start.
TEST_F(GemmMmaGpu, double_buffered_loop_hands_over_to_bounded_copies_at_edges) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  const std::vector<Shape> shapes = {{384, 272, 1000}, {256, 256, 96}, {512, 256, 1536}};
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes)
          run_case(type, typed(type, a, b, m, n, k, 0.5f), 1.0f, 0.5f);
  expect_no_failures();
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (size_t i : {0, 2, 8, 9})
      EXPECT_GT((ok_runs_[{type, i}]), 0) << kTypes[type] << " " << configs()[i].canonical_name();
}

// Leading dimensions of row length + 1 (4097 and 1023 in miniature) and pointers one
// element past a 16-byte boundary: the narrow copies run, the wide ones are refused.
TEST_F(GemmMmaGpu, odd_leading_dimensions_and_misaligned_pointers_run_narrow_copies) {
  for (size_t type = 0; type < kTypes.size(); ++type) {
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (int variant = 0; variant < 2; ++variant) {
          // Packed with 16-byte multiple leading dimensions: only the pointers are off (B by
          // 8 bytes, A and C by one element).
          const Problem p = variant == 0 ? testing::stored(typed(type, a, b, 255, 129, 67, 0.5f),
                                                           testing::Storage::ld_plus_one)
                                         : testing::stored(typed(type, a, b, 256, 192, 320, 0.5f),
                                                           testing::Storage::pointers_off, 8);
          run_case(type, p, 1.25f, 0.5f);
        }
  }
  expect_no_failures();
  for (size_t type : {0, 2}) EXPECT_GT((ok_runs_[{type, 1}]), 0) << kTypes[type] << " 2-byte";
  for (size_t type : {4, 5}) EXPECT_GT((ok_runs_[{type, 3}]), 0) << kTypes[type] << " 4-byte";
}

// 3xTF32 with big*big only (F32X3_TERMS=1) is a tf32 kernel: f32x3's bound rejects it,
// while the shipped three-pass build of the same config passes on the same inputs.
TEST_F(GemmMmaGpu, one_pass_f32x3_kernel_fails_the_f32x3_accuracy_bound) {
  const KernelConfig config = mma(128, 128, 64, 64, 32, 3, 16, 1, 1, 1);
  const Problem p = Problem::packed(gemm_types("f32x3"), Op::N, Op::N, 256, 256, 1024);
  ASSERT_TRUE(evaluator().prepare(p, kQuick, {}, false).ok);
  // As tests/data/templates/gemm_mma_one_pass.cuh, inline: test data need not be on the device.
  auto one_pass = make_template("gemm_mma", kernel_source_from_text("gemm_mma",
                                                                    "#define F32X3_TERMS 1\n"
                                                                    "#include \"gemm_mma.cuh\"\n"));
  const CompiledKernel weak = build_kernel(*one_pass, config, p, arch_);
  ASSERT_TRUE(weak.ok) << weak.error;
  const TrialResult bad = evaluator().evaluate(config, weak.cubin);
  EXPECT_EQ(bad.status, TrialStatus::wrong_result) << bad.error;
  const CompiledKernel full = build_kernel(template_named("gemm_mma"), config, p, arch_);
  ASSERT_TRUE(full.ok) << full.error;
  const TrialResult good = evaluator().evaluate(config, full.cubin);
  EXPECT_EQ(good.status, TrialStatus::ok) << good.error;
  // Seen on the H200 (256x256x1024): 7.2e-6 for three passes, 2.6e-4 for one.
  EXPECT_LT(good.max_rel_error * 10, bad.max_rel_error);
}

}  // namespace
}  // namespace tgemm
