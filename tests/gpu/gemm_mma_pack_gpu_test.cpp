// gemm_mma PACK=1 on a GPU, through the evaluator (cuBLAS FP32 reference, poisoned C): every
// type (f16 and bf16 with f16/bf16 or f32 C, tf32, f32x3), the four layouts, odd and prime
// shapes, leading dimensions of row length + 1 and pointers one element off (2- and 4-byte
// alignment, which only the packs can read with 16-byte copies), beta != 0, split-K, and
// PACK=2's transposed f32 operands.
// Skips without a GPU.
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

// A PACK config (16-byte copies of the packed operands).
KernelConfig packed(int64_t bm, int64_t bn, int64_t bk_bytes, int64_t wm, int64_t wn,
                    int64_t stages, int64_t smem_xor, int64_t split_k, int64_t swizzle,
                    int64_t pack = 1) {
  KernelConfig c = testing::mma(bm, bn, bk_bytes, wm, wn, stages, 16, smem_xor, split_k, swizzle);
  c.set("PACK", pack);
  return c;
}

const std::vector<KernelConfig>& configs() {
  static const std::vector<KernelConfig> c = {
      packed(128, 128, 128, 64, 64, 3, 1, 1, 8),    // 0: the f16 PACK default
      packed(64, 64, 64, 32, 32, 4, 0, 1, 1),       // 1: small tiles, padded layout
      packed(64, 64, 64, 32, 32, 3, 1, 4, 1),       // 2: split-K (f32 C only)
      packed(128, 64, 64, 64, 32, 2, 1, 1, 8),      // 3: cp.async double buffer
      packed(128, 128, 64, 64, 64, 4, 1, 1, 8, 2),  // 4: f32 transposed K-contiguous
      packed(64, 64, 64, 32, 32, 3, 0, 4, 1, 2),    // 5: the same, padded, split-K
  };
  return c;
}

const auto& kTypes = testing::kMmaTypes;

class GemmMmaPackGpu : public testing::MmaGpuTest {
 protected:
  GemmMmaPackGpu() : MmaGpuTest(configs()) {}
  const testing::MmaKernels& kernels() const override {
    static const testing::MmaKernels built(configs(), arch_);
    return built;
  }
};

// variant 0: packed storage, beta 0; 1: leading dimensions of row length + 1; 2: every
// pointer one element past a 16-byte boundary.
Problem variant_of(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, int variant) {
  Problem p = Problem::packed(parse_gemm_types(kTypes[type]), a, b, m, n, k);
  p.beta_zero = variant == 0;
  return testing::stored(p, testing::Storage(variant));
}

TEST_F(GemmMmaPackGpu, every_type_and_layout_is_correct_at_any_alignment) {
  const std::vector<Shape> shapes = {{64, 64, 64},    {97, 61, 131},   {1, 7, 3},
                                     {257, 300, 520}, {33, 513, 1000}, {255, 129, 67}};
  for (size_t type = 0; type < kTypes.size(); ++type)
    run_every_layout_and_storage(type, shapes, variant_of);
  expect_no_failures();
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (size_t i : {0, 1, 3})
      EXPECT_GT((ok_runs_[{type, i}]), 0) << kTypes[type] << " " << configs()[i].canonical_name();
  for (size_t type : {1, 3, 4, 5})
    EXPECT_GT((ok_runs_[{type, 2}]), 0) << "split-K with PACK, " << kTypes[type];
  for (size_t type : {4, 5})
    for (size_t i : {4, 5}) EXPECT_GT((ok_runs_[{type, i}]), 0) << "PACK=2, " << kTypes[type];
}

// Deep K over several slices and split-K slices, at 4097-style misalignment.
TEST_F(GemmMmaPackGpu, long_k_split_k_and_misaligned_leading_dimensions_agree_with_cublas) {
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        run_case(type, variant_of(type, a, b, 321, 259, 2049, 1), 1, 0.5f);
  expect_no_failures();
}

}  // namespace
}  // namespace tgemm
