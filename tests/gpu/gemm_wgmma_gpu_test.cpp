// gemm_wgmma on an sm_90 GPU, through the evaluator (cuBLAS FP32 reference, FP64 for small
// problems, poisoned C): f16, bf16 (C in the input type or f32) and tf32; the four layouts;
// tiled, ragged (M, N, K not multiples of the tile) and, for tf32's pack, odd shapes;
// beta != 0; f32x3 (3xTF32) under the evaluator's rule (FP64 reference, at most 3x cuBLAS
// SGEMM's error), also on deep K where truncating tensor-core sums would drift; PACK=1 (16-bit
// A and B packed first) on odd and prime shapes, leading dimensions of row length + 1 and
// pointers one element off a 16-byte boundary, which PACK=0 refuses; SPLIT_K 2..64 into an f32
// C (tf32, f32x3, f16_out_f32, bf16_out_f32) with beta != 0, ragged K and empty trailing blocks;
// tf32 PACK=2 (K-major operands read in place, MN-major ones packed) in every layout, at 4-byte
// alignment, odd shapes, beta != 0 and split. Skips without an sm_90 GPU.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "src/core/device_info.h"
#include "tests/gpu/mma_gpu_harness.h"

namespace tgemm {
namespace {

KernelConfig wgmma(int64_t bm, int64_t bn, int64_t wgs, int64_t stages, int64_t swizzle) {
  return {"gemm_wgmma",
          {{"BM", bm}, {"BN", bn}, {"WGS", wgs}, {"STAGES", stages}, {"SWIZZLE", swizzle}}};
}

// Both warpgroup counts, every BN, m64 tiles 1 and 2 per warpgroup, 3..5 stages.
const std::vector<KernelConfig>& configs() {
  static const std::vector<KernelConfig> c = {
      wgmma(128, 256, 2, 4, 8),  // 0: the default
      wgmma(128, 128, 1, 4, 1),  // 1: one warpgroup, two m64 tiles
      wgmma(256, 128, 2, 3, 8),  // 2: two warpgroups of two m64 tiles, 3 stages
      wgmma(64, 64, 1, 5, 1),    // 3: the smallest, 5 stages
      wgmma(128, 128, 2, 3, 8),  // 4: f32x3's largest tile (64 + 64 accumulators, 3 stages)
      wgmma(128, 64, 1, 4, 1),   // 5: f32x3 with two m64 tiles per warpgroup
  };
  return c;
}

const auto& kTypes = testing::kMmaTypes;

// A gemm_wgmma suite over one list of configs, built once per process; sm_90 only.
template <const std::vector<KernelConfig>& (*Configs)()>
class WgmmaGpuTest : public testing::MmaGpuTest {
 protected:
  WgmmaGpuTest() : MmaGpuTest(Configs(), "gemm_wgmma") {}
  void SetUp() override {
    MmaGpuTest::SetUp();
    if (IsSkipped()) return;
    if (arch_ != "sm_90") GTEST_SKIP() << "wgmma needs sm_90 (have " << arch_ << ")";
  }
  const testing::MmaKernels& kernels() const override {
    static const testing::MmaKernels built(Configs(), arch_, "gemm_wgmma");
    return built;
  }
};
using GemmWgmmaGpu = WgmmaGpuTest<configs>;

Problem typed(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, float beta) {
  Problem p = Problem::packed(parse_gemm_types(kTypes[type]), a, b, m, n, k);
  p.beta_zero = beta == 0.0f;
  return p;
}

TEST_F(GemmWgmmaGpu, every_type_and_layout_is_correct_on_tiled_and_ragged_shapes) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  // 16-bit rows need 16-byte alignment: multiples of 8 (the 97 x 61 x 131 case runs tf32 only,
  // the 16-bit kernels refuse it and the evaluator must say invalid).
  const std::vector<Shape> shapes = {{256, 256, 256},   {64, 64, 64}, {200, 136, 264},
                                     {1000, 520, 1000}, {8, 8, 8},    {97, 61, 131},
                                     {1024, 1024, 1024}};
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes) {
          run_case(type, typed(type, a, b, m, n, k, 0.0f), 1.0f, 0.0f);
          run_case(type, typed(type, a, b, m, n, k, 0.75f), -1.5f, 0.75f);
        }
  expect_no_failures();
  for (size_t type : {0, 1, 2, 3, 4})
    for (size_t i = 0; i < configs().size(); ++i)
      EXPECT_GT((ok_runs_[{type, i}]), 0) << kTypes[type] << " " << configs()[i].canonical_name();
  for (size_t i : {3, 4, 5})  // the configs f32x3 fits
    EXPECT_GT((ok_runs_[{5, i}]), 0) << "f32x3 " << configs()[i].canonical_name();
}

// Deep K: 3xTF32 summed straight into truncating accumulators drifts past SGEMM's error.
TEST_F(GemmWgmmaGpu, f32x3_stays_within_three_times_sgemm_error_on_deep_k) {
  constexpr size_t kF32x3 = 5;
  ASSERT_EQ(std::string(kTypes[kF32x3]), "f32x3");
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      run_case(kF32x3, typed(kF32x3, a, b, 256, 192, 8192, 0.0f), 1.0f, 0.0f);
      run_case(kF32x3, typed(kF32x3, a, b, 129, 67, 4099, 0.5f), 1.0f, 0.5f);
    }
  expect_no_failures();
  for (size_t i : {3, 4, 5}) EXPECT_EQ((ok_runs_[{kF32x3, i}]), 8) << configs()[i].canonical_name();
}

KernelConfig packed(int64_t bm, int64_t bn, int64_t wgs, int64_t stages, int64_t swizzle) {
  KernelConfig c = wgmma(bm, bn, wgs, stages, swizzle);
  c.set("PACK", 1);
  return c;
}

const std::vector<KernelConfig>& pack_configs() {
  static const std::vector<KernelConfig> c = {
      packed(128, 256, 2, 4, 8),  // 0: the largest tile
      packed(64, 64, 1, 5, 1),    // 1: the mid-size default (1023^3)
      packed(128, 128, 1, 4, 1),  // 2: one warpgroup, two m64 tiles (the default is WGS 2)
  };
  return c;
}

using GemmWgmmaPackGpu = WgmmaGpuTest<pack_configs>;

// variant 0: packed storage, beta 0; 1: leading dimensions of row length + 1; 2: every pointer
// one element past a 16-byte boundary (1 and 2 with beta != 0).
Problem variant_of(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, int variant) {
  return testing::stored(typed(type, a, b, m, n, k, variant == 0 ? 0.0f : 0.5f),
                         testing::Storage(variant));
}

TEST_F(GemmWgmmaPackGpu, pack_1_is_correct_for_16_bit_types_at_any_alignment_and_layout) {
  const std::vector<Shape> shapes = {{127, 257, 509}, {1023, 1023, 1023}, {64, 64, 64},
                                     {1, 7, 3},       {200, 136, 264},    {97, 61, 131}};
  for (size_t type : {0, 1, 2, 3})  // f16, bf16 with C in the input type or f32
    run_every_layout_and_storage(type, shapes, variant_of);
  expect_no_failures();
  for (size_t type : {0, 1, 2, 3})
    for (size_t i = 0; i < pack_configs().size(); ++i)
      EXPECT_EQ((ok_runs_[{type, i}]), 4 * 6 * 3)
          << kTypes[type] << " " << pack_configs()[i].canonical_name();
}

// Deep K over many slices at 4097-style misalignment, beta != 0.
TEST_F(GemmWgmmaPackGpu, pack_1_agrees_with_cublas_on_deep_k_with_misaligned_rows) {
  for (size_t type : {0, 1, 2, 3})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        run_case(type, variant_of(type, a, b, 321, 259, 4097, 1), 1, 0.5f);
  expect_no_failures();
  for (size_t type : {0, 2})
    for (size_t i = 0; i < pack_configs().size(); ++i) EXPECT_EQ((ok_runs_[{type, i}]), 4);
}

KernelConfig split(int64_t bm, int64_t bn, int64_t wgs, int64_t stages, int64_t split_k,
                   int64_t pack = 0) {
  KernelConfig c = wgmma(bm, bn, wgs, stages, 1);
  c.set("SPLIT_K", split_k);
  c.set("PACK", pack);
  return c;
}

// Every split the space offers, on tiles f32x3 fits too (64 on a 64x64 tile); the last one
// packs 16-bit operands (PACK=1: refused, so never built, for tf32 and f32x3).
const std::vector<KernelConfig>& split_configs() {
  static const std::vector<KernelConfig> c = {
      split(128, 128, 2, 3, 2),    // 0: two warpgroups, f32x3's largest tile
      split(128, 64, 1, 4, 4),     // 1: one warpgroup of two m64 tiles
      split(128, 128, 2, 3, 16),   // 2
      split(64, 64, 1, 5, 64),     // 3: the one-tile deep-K split
      split(64, 128, 1, 4, 16),    // 4
      split(128, 64, 1, 4, 4, 1),  // 5: PACK=1 (16-bit only)
  };
  return c;
}
constexpr size_t kPackSplit = 5;

using GemmWgmmaSplitGpu = WgmmaGpuTest<split_configs>;

// The f32-C types: f16_out_f32, bf16_out_f32, tf32, f32x3 (their 16-bit-C twins refuse the
// split: unbuilt, and the evaluator says invalid).
const std::vector<size_t> kF32C = {1, 3, 4, 5};

// Ragged K (1000: 32 tf32 slices of 32, 16 of 64 in 16-bit, over 2..64 blocks; 8200 deep on few
// tiles) and K = 40 (two tf32 slices, one 16-bit: split 16 and 64 leave trailing blocks with
// nothing to add), beta 0 and beta != 0, four layouts.
TEST_F(GemmWgmmaSplitGpu, split_k_is_correct_for_f32_c_types_with_ragged_k_and_empty_blocks) {
  for (size_t i = 0; i < kF32C.size(); ++i)
    ASSERT_EQ(std::string(kTypes[kF32C[i]]),
              std::vector<std::string>({"f16_out_f32", "bf16_out_f32", "tf32", "f32x3"})[i]);
  const std::vector<Shape> shapes = {
      {200, 136, 1000}, {64, 64, 40}, {128, 128, 8200}, {1000, 520, 2056}, {8, 8, 8}};
  for (size_t type : kF32C)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes) {
          run_case(type, typed(type, a, b, m, n, k, 0.0f), 1.0f, 0.0f);
          run_case(type, typed(type, a, b, m, n, k, 0.75f), -1.5f, 0.75f);
        }
  // A 16-bit C is refused (invalid), never added into with atomics.
  run_case(0, typed(0, Op::N, Op::N, 200, 136, 1000, 0.5f), 1.0f, 0.5f);
  expect_no_failures();
  for (size_t type : kF32C)
    for (size_t i = 0; i < split_configs().size(); ++i) {
      const bool packs_f32 = i == kPackSplit && type >= 4;
      EXPECT_EQ((ok_runs_[{type, i}]), packs_f32 ? 0 : int(4 * shapes.size() * 2))
          << kTypes[type] << " " << split_configs()[i].canonical_name();
    }
  EXPECT_EQ((ok_runs_[{0, 0}]), 0);
}

// The shape split-K is for: one 128x128 tile, K = 65536 (f32x3 at most 3x SGEMM's error);
// also misaligned 16-bit rows (PACK=1) split into an f32 C.
TEST_F(GemmWgmmaSplitGpu, split_k_serves_one_deep_tile_and_packed_16_bit_operands) {
  constexpr size_t kF32x3 = 5;
  ASSERT_EQ(std::string(kTypes[kF32x3]), "f32x3");
  for (size_t type : {kF32x3, size_t(4)})
    run_case(type, typed(type, Op::N, Op::N, 128, 128, 65536, 0.0f), 1.0f, 0.0f);
  for (size_t type : {1, 3})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        run_case(
            type,
            testing::stored(typed(type, a, b, 127, 257, 4097, 0.5f), testing::Storage::ld_plus_one),
            1.25f, 0.5f);
  expect_no_failures();
  for (size_t i = 0; i < kPackSplit; ++i)
    EXPECT_EQ((ok_runs_[{kF32x3, i}]), 1) << split_configs()[i].canonical_name();
  for (size_t type : {1, 3}) EXPECT_EQ((ok_runs_[{type, kPackSplit}]), 4) << kTypes[type];
}

KernelConfig in_place(int64_t bm, int64_t bn, int64_t wgs, int64_t stages, int64_t split_k = 1) {
  KernelConfig c = wgmma(bm, bn, wgs, stages, split_k == 1 ? 8 : 1);
  c.set("PACK", 2);
  c.set("SPLIT_K", split_k);
  return c;
}

// tf32 PACK=2: every BN, one and two warpgroups, a one-warpgroup 256-row tile (64 4-byte copies
// per thread of A), and split K.
const std::vector<KernelConfig>& in_place_configs() {
  static const std::vector<KernelConfig> c = {
      in_place(128, 256, 2, 4),     // 0: the largest tile
      in_place(128, 64, 2, 5),      // 1: 1023^3's tile
      in_place(64, 64, 1, 5),       // 2: the smallest
      in_place(256, 64, 1, 4),      // 3: 256 rows over one warpgroup
      in_place(128, 64, 1, 4, 16),  // 4: split 16
  };
  return c;
}

using GemmWgmmaInPlaceGpu = WgmmaGpuTest<in_place_configs>;

TEST_F(GemmWgmmaInPlaceGpu, tf32_pack_2_is_correct_at_any_alignment_and_layout) {
  constexpr size_t kTf32 = 4;
  ASSERT_EQ(std::string(kTypes[kTf32]), "tf32");
  const std::vector<Shape> shapes = {{127, 257, 509}, {1023, 1023, 1023}, {1, 7, 3},
                                     {200, 136, 264}, {97, 61, 131},      {33, 300, 4097}};
  run_every_layout_and_storage(kTf32, shapes, variant_of);
  // The one deep tile split-K is for.
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) run_case(kTf32, typed(kTf32, a, b, 128, 128, 65536, 0.0f), 1, 0);
  expect_no_failures();
  for (size_t i = 0; i < in_place_configs().size(); ++i)
    EXPECT_EQ((ok_runs_[{kTf32, i}]), int(4 * shapes.size() * 3 + 4))
        << in_place_configs()[i].canonical_name();
}

}  // namespace
}  // namespace tgemm
