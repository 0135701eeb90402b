// gemm_tma_wgmma on an sm_90 GPU, through the evaluator (cuBLAS FP32 reference, FP64 for small
// problems, poisoned C): f16, bf16 (C in the input type or f32) and tf32 in the four layouts
// (tf32's MN-major operands packed K-major first, so not with split-K);
// tiled, ragged and odd or prime M, N, K with rows padded to 16 bytes; beta != 0; one and two
// consumer warpgroups, every BN, 2..8 stages; persistent grids with more units than blocks;
// SPLIT_K with ragged K and ranges past K's end, into every C type; clusters of two blocks
// sharing B's tiles or A's, and of four sharing both, with odd tile-row and column counts (a
// block's tile outside C); C through shared memory by tensor stores where beta is 0 and its rows
// are whole 16 bytes (ragged edges clipped by the copy engine), directly otherwise (N = 61, 7
// and 509 of 16-bit C check that no store reaches a row's padding). Misaligned operands are refused
// (invalid). Skips without an sm_90 GPU.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/common/tma_configs.h"
#include "tests/gpu/mma_gpu_harness.h"

namespace tgemm {
namespace {

KernelConfig tma(int64_t bm, int64_t bn, int64_t consumers, int64_t stages, int64_t swizzle,
                 int64_t split_k = 1, int64_t cluster = 1, int64_t cluster_n = 1,
                 int64_t tma_store = 0) {
  return testing::tma_config(bm, bn, consumers, stages, swizzle, split_k, cluster, cluster_n,
                             tma_store);
}

const std::vector<KernelConfig>& configs() {
  static const std::vector<KernelConfig> c = {
      tma(128, 256, 2, 4, 8),           // 0: the largest tile of one m64 per consumer
      tma(128, 128, 1, 6, 1),           // 1: one consumer of two m64 tiles
      tma(256, 128, 2, 4, 8),           // 2: two consumers of two m64 tiles each
      tma(64, 64, 1, 2, 1),             // 3: the smallest, two stages
      tma(128, 192, 2, 5, 16),          // 4: BN = 192
      tma(128, 128, 2, 4, 1, 2),        // 5: split in two
      tma(64, 128, 1, 8, 1, 8),         // 6: split in eight, eight stages
      tma(128, 256, 2, 4, 8, 1, 2),     // 7: a cluster of two sharing B (half each)
      tma(64, 64, 1, 4, 1, 1, 2),       // 8: MN-major B of one 64-column box: rank 0 copies it all
      tma(256, 128, 2, 4, 1, 2, 2),     // 9: a cluster, split in two
      tma(256, 128, 2, 4, 8, 1, 1, 2),  // 10: a cluster of two sharing A (half each)
      tma(128, 128, 2, 4, 1, 1, 2, 2),  // 11: four blocks, each sharing A with one, B with another
      tma(64, 64, 1, 4, 1, 1, 1, 2),    // 12: MN-major A of one 64-column box: rank 0 copies it all
      tma(128, 192, 2, 4, 1, 2, 1, 2),  // 13: sharing A, split in two
      tma(128, 256, 2, 4, 8, 1, 2, 1, 1),  // 14: C by tensor stores (beta 0), a cluster sharing B
      tma(256, 128, 2, 3, 8, 1, 1, 2, 1),  // 15: tensor stores of two m64 chunks per consumer
      tma(64, 64, 1, 2, 1, 1, 1, 1, 1),    // 16: one consumer, one chunk of 16-bit C per tile
      tma(128, 192, 2, 4, 1, 1, 1, 1, 1),  // 17: BN = 192: three chunks (six of f32 C)
  };
  return c;
}

const auto& kTypes = testing::kMmaTypes;

class GemmTmaWgmmaGpu : public testing::MmaGpuTest {
 protected:
  GemmTmaWgmmaGpu() : MmaGpuTest(configs(), "gemm_tma_wgmma") {}
  void SetUp() override {
    MmaGpuTest::SetUp();
    if (IsSkipped()) return;
    if (arch_ != "sm_90") GTEST_SKIP() << "wgmma and TMA need sm_90 (have " << arch_ << ")";
  }
  const testing::MmaKernels& kernels() const override {
    static const testing::MmaKernels built(configs(), arch_, "gemm_tma_wgmma");
    return built;
  }
};

Problem typed(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, float beta,
              testing::Storage storage) {
  Problem p = Problem::packed(parse_gemm_types(kTypes[type]), a, b, m, n, k);
  p.beta_zero = beta == 0.0f;
  return testing::stored(p, storage);
}

constexpr size_t kTf32 = 4;

TEST_F(GemmTmaWgmmaGpu, every_type_and_layout_is_correct_on_tiled_ragged_and_prime_shapes) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  // Past one wave of tiles (1000 x 1032: 8 x 5 of 128 x 256 on fewer SMs than units is not
  // reached here, so 2048 x 2048 x 128 gives 64..1024 units), primes, K of one partial slice.
  const std::vector<Shape> shapes = {{256, 256, 256}, {64, 64, 64},     {200, 136, 264},
                                     {97, 61, 131},   {1, 7, 3},        {1000, 1032, 1000},
                                     {257, 509, 127}, {2048, 2048, 128}};
  for (size_t type = 0; type <= kTf32; ++type)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes) {
          run_case(type, typed(type, a, b, m, n, k, 0.0f, testing::Storage::ld_padded16), 1.0f,
                   0.0f);
          run_case(type, typed(type, a, b, m, n, k, 0.75f, testing::Storage::ld_padded16), -1.5f,
                   0.75f);
        }
  expect_no_failures();
  for (size_t type = 0; type < kTf32; ++type)  // 16-bit: every layout
    for (size_t i = 0; i < configs().size(); ++i)
      EXPECT_EQ((ok_runs_[{type, i}]), 4 * 8 * 2)
          << kTypes[type] << " " << configs()[i].canonical_name();
  for (size_t i = 0; i < configs().size(); ++i)  // tf32: NT, and the packed layouts unsplit
    EXPECT_EQ((ok_runs_[{kTf32, i}]), (configs()[i].get("SPLIT_K") == 1 ? 4 : 1) * 8 * 2)
        << "tf32 " << configs()[i].canonical_name();
}

// Operands one element off 16 bytes, or rows of length + 1: tensor maps cannot express them,
// and the family says so (the evaluator's invalid), never a wrong result.
TEST_F(GemmTmaWgmmaGpu, misaligned_operands_are_refused) {
  for (size_t type : {size_t(0), size_t(3), kTf32})
    for (auto storage : {testing::Storage::ld_plus_one, testing::Storage::pointers_off})
      run_case(type, typed(type, Op::N, Op::T, 136, 72, 88, 0.5f, storage), 1.0f, 0.5f);
  expect_no_failures();
  EXPECT_TRUE(ok_runs_.empty());
}

// A and B aligned but C's rows one element longer: no tensor map can store C, so the configs
// that store by tensor copies store C directly (beta 0 here, where they would stage it).
TEST_F(GemmTmaWgmmaGpu, a_misaligned_c_is_stored_directly) {
  for (size_t type : {size_t(0), size_t(3)})
    for (const auto& [m, n, k] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{200, 136, 264}, {256, 256, 128}}) {
      Problem p = typed(type, Op::N, Op::T, m, n, k, 0.0f, testing::Storage::ld_padded16);
      p.ldc = p.n + 1;
      p.align_c = alignment_bytes(p.ldc, 0, element_bytes(p.types.c));
      run_case(type, p, 1.0f, 0.0f);
    }
  expect_no_failures();
  for (size_t i = 0; i < configs().size(); ++i)
    EXPECT_EQ((ok_runs_[{0, i}]) + (ok_runs_[{3, i}]), 4) << configs()[i].canonical_name();
}

// Deep K on one or a few tiles: the split configs' ranges, some past K's end when K is short.
TEST_F(GemmTmaWgmmaGpu, deep_k_and_short_k_are_correct_split_or_not) {
  for (size_t type : {size_t(0), size_t(1), size_t(2), kTf32})
    for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {128, 128, 8192}, {130, 200, 4104}, {64, 64, 72}})
      run_case(type, typed(type, Op::N, Op::T, m, n, k, 0.5f, testing::Storage::ld_padded16), 0.5f,
               0.5f);
  expect_no_failures();
  for (size_t i = 0; i < configs().size(); ++i)
    EXPECT_EQ((ok_runs_[{1, i}]), 3) << configs()[i].canonical_name();
}

}  // namespace
}  // namespace tgemm
