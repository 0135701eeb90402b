// sgemm_warp on a GPU, verified against cuBLAS through GemmEvaluator: every layout, odd and
// prime M/N/K, leading dimensions that are not multiples of 4, misaligned pointers,
// beta != 0 and split-K, over several configs of the space; then timed against cuBLAS at
// 4096^3 and 4097^3. Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <tuple>
#include <utility>

#include "src/core/device_info.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

KernelConfig warp(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t tm,
                  int64_t tn, int64_t stages, int64_t vec, int64_t split_k, int64_t swizzle,
                  int64_t min_blocks) {
  return {"sgemm_warp",
          {{"BM", bm},
           {"BN", bn},
           {"BK", bk},
           {"WM", wm},
           {"WN", wn},
           {"TM", tm},
           {"TN", tn},
           {"STAGES", stages},
           {"VEC", vec},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle},
           {"MIN_BLOCKS", min_blocks}}};
}

// 16x8 / 8x16 / 8x8 / 4x8 / 16x4 thread tiles, STAGES 2/3/4, VEC 1/2/4, BK 8/16, split-K 4/16,
// PACK_B, stream tails of 8 and 4 slices.
std::vector<KernelConfig> sample_configs(const std::string& arch) {
  std::vector<KernelConfig> configs = {
      warp(256, 128, 8, 64, 64, 16, 8, 3, 4, 1, 8, 1),  // 0: cuBLAS's shape
      warp(128, 256, 8, 64, 64, 8, 16, 4, 2, 1, 1, 1),  // 1: VEC 2
      warp(128, 128, 8, 64, 32, 8, 8, 2, 1, 1, 8, 1),   // 2: VEC 1, 8x8
      warp(128, 128, 16, 32, 64, 8, 8, 4, 4, 4, 1, 1),  // 3: split-K 4
      warp(64, 64, 16, 32, 32, 4, 8, 3, 1, 16, 8, 1),   // 4: VEC 1, split-K 16
      warp(64, 128, 8, 32, 64, 8, 8, 2, 2, 1, 1, 2),    // 5: VEC 2, two 128-thread blocks per SM
      warp(128, 256, 8, 64, 64, 16, 8, 4, 4, 1, 8, 1),  // 6: PACK_B (below)
      warp(64, 64, 16, 32, 32, 4, 8, 3, 4, 16, 8, 1),   // 7: PACK_B with split-K 16
      warp(64, 128, 8, 64, 32, 16, 4, 4, 1, 1, 8, 2),   // 8: TAIL_SPLIT 8 (below)
      warp(128, 128, 8, 64, 32, 8, 8, 3, 4, 1, 1, 2),   // 9: TAIL_SPLIT 4 with PACK_B
  };
  // B packed as [k][n] first: runs T-layout and misaligned B, refuses an aligned N-layout one.
  configs[6].set("PACK_B", 1);
  configs[7].set("PACK_B", 1);
  configs[9].set("PACK_B", 1);
  // The tiles past the last whole wave in K slices; with fewer tiles than one wave, all of them.
  configs[8].set("TAIL_SPLIT", 8);
  configs[9].set("TAIL_SPLIT", 4);
  if (arch == "sm_75")
    for (KernelConfig& c : configs) c.set("STAGES", 2);
  return configs;
}

// Every sample config compiled for the GPU's arch in every layout, once, in parallel.
std::vector<CompiledKernel> compile_all(const std::vector<KernelConfig>& configs,
                                        const std::string& arch) {
  std::vector<CompiledKernel> out(configs.size() * 4);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < out.size(); i = next++) {
      const Op a = (i % 4) / 2 ? Op::T : Op::N, b = i % 2 ? Op::T : Op::N;
      out[i] = testing::compile_f32(configs[i / 4], a, b, arch);
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return out;
}

// One evaluator for the suite, never destroyed (cuBLAS must not outlive the runtime).
GemmEvaluator& evaluator() {
  static GemmEvaluator* e = new GemmEvaluator(0);
  return *e;
}

const TimingOptions kQuick{0, 1, 1, 1.0, 0.5};

struct Scalars {
  float alpha, beta;
};
const Scalars kPlain{1.0f, 0.0f};
const Scalars kScaled{-1.5f, 0.75f};

class SgemmWarpGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
    configs_ = sample_configs(arch_);
    static const std::vector<CompiledKernel> kernels = compile_all(configs_, arch_);
    kernels_ = &kernels;
  }

  // Evaluates every config on `problem`: a supported config must be ok, an unsupported one
  // invalid; each surprise is one line of failures_.
  void run_case(Problem problem, Scalars s) {
    problem.beta_zero = s.beta == 0.0f;
    const std::string what = fmt::format("{} lda {} ldb {} ldc {} beta {}", problem.key(),
                                         problem.lda, problem.ldb, problem.ldc, s.beta);
    const CublasTiming prepared =
        evaluator().prepare(problem, kQuick, GemmScalars{s.alpha, s.beta}, false);
    if (!prepared.ok) {
      failures_.push_back(what + ": prepare failed: " + prepared.error);
      return;
    }
    for (size_t i = 0; i < configs_.size(); ++i) {
      const size_t layout = (problem.op_a == Op::T ? 2 : 0) + (problem.op_b == Op::T ? 1 : 0);
      const CompiledKernel& kernel = (*kernels_)[i * 4 + layout];
      if (!kernel.ok) {
        failures_.push_back(configs_[i].canonical_name() + ": compile failed: " + kernel.error);
        continue;
      }
      const TrialResult r = evaluator().evaluate(configs_[i], kernel.cubin);
      const bool supported =
          !template_named("sgemm_warp").unsupported_reason(configs_[i], problem, arch_);
      const TrialStatus expected = supported ? TrialStatus::ok : TrialStatus::invalid;
      if (r.status != expected)
        failures_.push_back(fmt::format("{} on {}: {} ({}), expected {}",
                                        configs_[i].canonical_name(), what, to_string(r.status),
                                        r.error, to_string(expected)));
      if (r.status == TrialStatus::ok) {
        ++ok_runs_[i];
        EXPECT_LE(r.max_rel_error, relative_error_bound(GemmTypes{}, problem.k));
      }
      ASSERT_FALSE(evaluator().context_broken()) << configs_[i].canonical_name() << " " << what;
    }
  }

  void expect_no_failures_and_every_config_ran() {
    std::string all;
    for (size_t i = 0; i < failures_.size() && i < 40; ++i) all += failures_[i] + "\n";
    EXPECT_TRUE(failures_.empty()) << failures_.size() << " failure(s):\n" << all;
    for (size_t i = 0; i < configs_.size(); ++i)
      EXPECT_GT(ok_runs_[i], 0) << configs_[i].canonical_name() << " never ran";
  }

  std::string arch_;
  std::vector<KernelConfig> configs_;
  const std::vector<CompiledKernel>* kernels_ = nullptr;
  std::vector<std::string> failures_;
  std::map<size_t, int> ok_runs_;
};

using Shape = std::tuple<int64_t, int64_t, int64_t>;

TEST_F(SgemmWarpGpu, odd_and_prime_shapes_are_correct_in_every_layout) {
  const Shape shapes[] = {{1, 1, 1},         {7, 13, 129},    {129, 1023, 7},
                          {1023, 129, 1031}, {4099, 67, 263}, {61, 4097, 131}};
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (auto [m, n, k] : shapes)
        for (Scalars s : {kPlain, kScaled})
          run_case(Problem::packed(GemmTypes{}, a, b, m, n, k), s);
  expect_no_failures_and_every_config_ran();
}

// Row strides one or two floats past the row: VEC 1 (odd) and VEC 2 (even) must still run.
TEST_F(SgemmWarpGpu, leading_dimensions_not_multiples_of_4_are_honoured) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (int64_t extra : {1, 2})
        for (Scalars s : {kPlain, kScaled}) {
          Problem p = Problem::packed(GemmTypes{}, a, b, 255, 329, 67);
          p.lda = p.a_cols() + extra;
          p.ldb = p.b_cols() + extra;
          p.ldc = p.n + extra;
          p.align_a = alignment_bytes(p.lda, 0, 4);
          p.align_b = alignment_bytes(p.ldb, 0, 4);
          p.align_c = alignment_bytes(p.ldc, 0, 4);
          run_case(p, s);
        }
  expect_no_failures_and_every_config_ran();
}

// Alignment 4 and 8 place an operand 4 and 8 bytes past a 16-byte boundary.
TEST_F(SgemmWarpGpu, misaligned_pointers_are_handled) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (int align : {4, 8})
        for (Scalars s : {kPlain, kScaled}) {
          Problem p = Problem::packed(GemmTypes{}, a, b, 256, 192, 320);
          p.align_a = align;
          p.align_b = 12 - align;
          p.align_c = align;
          run_case(p, s);
        }
  expect_no_failures_and_every_config_ran();
}

// Every slice after the first takes the same copy path in inside and edge blocks, and the
// partial K slice comes first (in each split-K part): K one past, and one short of, whole
// slices, over a grid with inside and edge blocks.
TEST_F(SgemmWarpGpu, inside_blocks_and_the_leading_partial_k_slice_are_correct) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (int64_t k : {16 * 33 + 1, 16 * 40 - 1})
        for (Scalars s : {kPlain, kScaled})
          run_case(Problem::packed(GemmTypes{}, a, b, 520, 392, k), s);
  expect_no_failures_and_every_config_ran();
}

// Edge blocks zero-fill rows past M and 4-byte columns past N from clamped addresses: blocks
// with one row or column inside, a block wider than the whole of N, and every tile edge at
// once, each with beta != 0 (a wrong row or column would show in C).
TEST_F(SgemmWarpGpu, edge_blocks_with_one_row_or_column_inside_are_correct) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (auto [m, n] : {std::pair<int64_t, int64_t>{257, 129}, {129, 257}, {127, 33}, {33, 5}})
        run_case(Problem::packed(GemmTypes{}, a, b, m, n, 16 * 21 + 5), kScaled);
  expect_no_failures_and_every_config_ran();
}

// Stream tails after whole waves (2049^2 in 64x128 tiles: 561 tiles, two waves of 264 and 33
// more; in 128x128: 289, one wave and 25): the tail tiles' slices hand over to the last one,
// twice in a row with other scalars (the arrival counters start each call from zero).
TEST_F(SgemmWarpGpu, stream_tail_tiles_after_whole_waves_are_correct_in_every_call) {
  for (Op b : {Op::N, Op::T})
    for (int64_t k : {100, 16 * 21 + 5})
      for (Scalars s : {kScaled, kPlain})
        run_case(Problem::packed(GemmTypes{}, Op::N, b, 2049, 2049, k), s);
  expect_no_failures_and_every_config_ran();
}

// Not a pass/fail bound: the figures the device run reports (interleaved with cuBLAS).
TEST_F(SgemmWarpGpu, prints_time_against_cublas_at_4096_and_4097) {
  const TimingOptions timing{3, 10, 100, 800, 0.01};
  for (int64_t size : {4096, 4097}) {
    const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, size, size, size);
    ASSERT_TRUE(evaluator().prepare(p, timing, {}, true).ok);
    for (size_t i = 0; i < 3; ++i) {
      KernelConfig c = configs_[i];
      if (size % 4) c.set("VEC", 1);  // ldb 4097: only 4-byte copies of B
      const CompiledKernel k = testing::compile_f32(c, Op::N, Op::N, arch_);
      ASSERT_TRUE(k.ok) << k.error;
      const Comparison r = evaluator().compare(c, k.cubin);
      ASSERT_TRUE(r.ok) << c.canonical_name() << ": " << r.error;
      std::printf("%lld^3 NN %s: %.1f us (%.2f TFLOP/s), cuBLAS %.1f us (%.2f), %.3fx; %d regs\n",
                  (long long)size, c.canonical_name().c_str(), r.tgemm_median_us,
                  p.flops() / r.tgemm_median_us * 1e-6, r.cublas_median_us,
                  p.flops() / r.cublas_median_us * 1e-6, r.cublas_median_us / r.tgemm_median_us,
                  k.resources.registers);
    }
  }
}

}  // namespace
}  // namespace tgemm
