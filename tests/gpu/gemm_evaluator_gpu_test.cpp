// GemmEvaluator on a GPU: the cuBLAS reference, and a diverse sample of sgemm_simt configs
// verified against it on the quick and irregular shapes, in all four layouts, with beta == 0
// and beta != 0, odd leading dimensions and misaligned pointers. Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "src/core/device_info.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/launch/launch_plan.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

KernelConfig simt(int64_t bm, int64_t bn, int64_t bk, int64_t tm, int64_t tn, int64_t warp_n,
                  int64_t vec, int64_t pad_a, int64_t pad_b, int64_t stages, int64_t split_k,
                  int64_t swizzle) {
  return {"sgemm_simt",
          {{"BM", bm},
           {"BN", bn},
           {"BK", bk},
           {"TM", tm},
           {"TN", tn},
           {"WARP_N", warp_n},
           {"VEC", vec},
           {"PAD_A", pad_a},
           {"PAD_B", pad_b},
           {"STAGES", stages},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle}}};
}

// Spans VEC 1/2/4, STAGES 1/2, PAD 0/4, SPLIT_K 1/4, SWIZZLE 1/8, TM 4/8/16, TN 4/8,
// WARP_N 4/8/16, 64..256 threads and > 48 KiB of shared memory; all legal in the space.
const std::vector<KernelConfig>& sample_configs() {
  static const std::vector<KernelConfig> configs = {
      simt(128, 128, 8, 8, 8, 8, 4, 4, 4, 2, 1, 1),    // 0: the classic
      simt(64, 64, 16, 4, 4, 16, 2, 0, 0, 1, 1, 8),    // 1
      simt(32, 64, 8, 4, 4, 4, 1, 4, 0, 2, 4, 1),      // 2: VEC 1, split-K
      simt(128, 64, 16, 8, 4, 8, 4, 0, 4, 2, 4, 8),    // 3: split-K, swizzle
      simt(64, 128, 8, 4, 8, 16, 1, 4, 4, 1, 1, 1),    // 4: VEC 1, single stage
      simt(256, 128, 16, 16, 8, 4, 4, 4, 4, 2, 1, 8),  // 5: 49 KiB of shared memory
      simt(32, 32, 32, 4, 4, 8, 2, 0, 4, 1, 4, 8),     // 6: 64 threads, split-K
      simt(64, 32, 8, 8, 4, 8, 4, 0, 0, 2, 1, 1),      // 7: 64 threads
  };
  return configs;
}

// The configs that also run the largest shapes (keeps the suite short).
const std::vector<size_t> kLargeShapeConfigs = {0, 2};

std::string layout_name(Op a, Op b) { return to_string(a) + to_string(b); }

// Every sample config compiled for the GPU's arch in every layout, once, in parallel.
class Kernels {
 public:
  static const Kernels& get(const std::string& arch) {
    static const Kernels kernels(arch);
    return kernels;
  }
  const CompiledKernel& at(size_t config, Op a, Op b) const {
    return compiled_[config * 4 + (a == Op::T ? 2 : 0) + (b == Op::T ? 1 : 0)];
  }

 private:
  explicit Kernels(const std::string& arch) : compiled_(sample_configs().size() * 4) {
    const KernelSource source = kernel_source("sgemm_simt");
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < compiled_.size(); i = next++) {
        const Op a = (i % 4) / 2 ? Op::T : Op::N, b = i % 2 ? Op::T : Op::N;
        compiled_[i] = tgemm::testing::compile_f32(sample_configs()[i / 4], a, b, arch);
      }
    };
    std::vector<std::thread> pool;
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  std::vector<CompiledKernel> compiled_;
};

// One evaluator (one CUDA context) for the whole suite; never destroyed, so that nothing
// tears down cuBLAS after the CUDA runtime has unloaded at exit.
GemmEvaluator& evaluator() {
  static GemmEvaluator* e = new GemmEvaluator(0);
  return *e;
}

// One timed run is enough here: these tests are about correctness.
const TimingOptions kQuick{0, 1, 1, 1.0, 0.5};

struct Scalars {
  float alpha, beta;
};
const Scalars kPlain{1.0f, 0.0f};
const Scalars kScaled{-1.5f, 0.75f};

Problem with_scalars(Problem p, Scalars s) {
  p.beta_zero = s.beta == 0.0f;
  return p;
}

class EvaluatorGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
  }

  // Prepares `problem` and evaluates `configs` on it; appends one line per surprise to
  // failures_: a supported config must be ok, an unsupported one invalid.
  void run_case(const Problem& problem, Scalars s, const std::vector<size_t>& configs) {
    const std::string what = fmt::format("{} lda {} ldb {} ldc {} alpha {} beta {}", problem.key(),
                                         problem.lda, problem.ldb, problem.ldc, s.alpha, s.beta);
    const CublasTiming prepared =
        evaluator().prepare(problem, kQuick, GemmScalars{s.alpha, s.beta}, false);
    if (!prepared.ok) {
      failures_.push_back(what + ": prepare failed: " + prepared.error);
      return;
    }
    const Kernels& kernels = Kernels::get(arch_);
    for (size_t i : configs) {
      const KernelConfig& config = sample_configs()[i];
      const CompiledKernel& kernel = kernels.at(i, problem.op_a, problem.op_b);
      if (!kernel.ok) {
        failures_.push_back(config.canonical_name() + ": compile failed: " + kernel.error);
        continue;
      }
      const TrialResult r = evaluator().evaluate(config, kernel.cubin);
      const bool supported =
          !template_named(config.template_name).unsupported_reason(config, problem, arch_);
      const TrialStatus expected = supported ? TrialStatus::ok : TrialStatus::invalid;
      if (r.status != expected)
        failures_.push_back(fmt::format("{} on {}: {} ({}), expected {}", config.canonical_name(),
                                        what, to_string(r.status), r.error, to_string(expected)));
      if (r.status == TrialStatus::ok) {
        ++ok_runs_[i];
        EXPECT_GT(r.time_median_us, 0);
        EXPECT_GE(r.runs, 1);
        EXPECT_LE(r.max_rel_error, relative_error_bound(GemmTypes{}, problem.k));
      }
      ASSERT_FALSE(evaluator().context_broken()) << config.canonical_name() << " on " << what;
    }
  }

  void expect_no_failures() {
    std::string all;
    for (size_t i = 0; i < failures_.size() && i < 40; ++i) all += failures_[i] + "\n";
    EXPECT_TRUE(failures_.empty()) << failures_.size() << " failure(s):\n" << all;
  }

  std::string arch_;
  std::vector<std::string> failures_;
  std::map<size_t, int> ok_runs_;
};

std::vector<size_t> all_configs() {
  std::vector<size_t> v(sample_configs().size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

TEST_F(EvaluatorGpu, cublas_reference_agrees_with_fp64_and_is_timed) {
  // prepare() checks cuBLAS against an FP64 host GEMM for problems this small: this pins the
  // row-major-to-column-major mapping of the reference in every layout.
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (Scalars s : {kPlain, kScaled}) {
        Problem p = with_scalars(Problem::packed(GemmTypes{}, a, b, 300, 200, 150), s);
        const CublasTiming t =
            evaluator().prepare(p, TimingOptions{}, GemmScalars{s.alpha, s.beta}, true);
        ASSERT_TRUE(t.ok) << layout_name(a, b) << ": " << t.error;
        EXPECT_GT(t.min_us, 0);
        EXPECT_LE(t.min_us, t.median_us);
        EXPECT_LE(t.median_us, t.max_us);
        EXPECT_GE(t.runs, TimingOptions{}.min_runs);
        EXPECT_LE(t.runs, TimingOptions{}.max_runs);
      }
}

TEST_F(EvaluatorGpu, sample_configs_are_correct_on_quick_and_irregular_shapes) {
  std::vector<NamedProblem> shapes =
      load_problem_set(std::string(TGEMM_SOURCE_DIR) + "/configs/shapes/quick.yaml");
  for (auto& s : load_problem_set(std::string(TGEMM_SOURCE_DIR) + "/configs/shapes/irregular.yaml"))
    shapes.push_back(s);
  ASSERT_GE(shapes.size(), 10u);
  for (const NamedProblem& shape : shapes) {
    const bool large = shape.problem.flops() > 2e10;
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (Scalars s : {kPlain, kScaled}) {
          const Problem p = with_scalars(
              Problem::packed(GemmTypes{}, a, b, shape.problem.m, shape.problem.n, shape.problem.k),
              s);
          run_case(p, s, large ? kLargeShapeConfigs : all_configs());
        }
  }
  expect_no_failures();
  for (size_t i = 0; i < sample_configs().size(); ++i)
    EXPECT_GT(ok_runs_[i], 0) << sample_configs()[i].canonical_name() << " never ran";
}

// lda = row length + 1 etc.: odd ones leave only VEC=1 configs, even ones VEC=2 as well.
TEST_F(EvaluatorGpu, padded_and_odd_leading_dimensions_are_honoured) {
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{255, 129, 67}, {200, 300, 400}})
        for (Scalars s : {kPlain, kScaled}) {
          Problem p = with_scalars(Problem::packed(GemmTypes{}, a, b, m, n, k), s);
          p.lda = p.a_cols() + 1;
          p.ldb = p.b_cols() + 1;
          p.ldc = p.n + 1;
          p.align_a = alignment_bytes(p.lda, 0, 4);
          p.align_b = alignment_bytes(p.ldb, 0, 4);
          p.align_c = alignment_bytes(p.ldc, 0, 4);
          run_case(p, s, all_configs());
        }
  expect_no_failures();
  EXPECT_GT(ok_runs_[2], 0);
  EXPECT_GT(ok_runs_[4], 0);
}

TEST_F(EvaluatorGpu, misaligned_pointers_are_handled) {
  // Alignment 1 and 2 place the operand 4 and 8 bytes past a 16-byte boundary.
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      for (Scalars s : {kPlain, kScaled}) {
        Problem p = with_scalars(Problem::packed(GemmTypes{}, a, b, 256, 192, 320), s);
        p.align_a = 4;  // bytes: A one float off
        p.align_b = 8;
        p.align_c = 4;  // C one float off: no float4 stores
        run_case(p, s, all_configs());
        Problem q = p;
        q.align_a = 8;
        q.align_c = 8;
        run_case(q, s, all_configs());
      }
  expect_no_failures();
  EXPECT_GT(ok_runs_[1], 0);  // VEC 2 ran on the 8-byte aligned case
  EXPECT_GT(ok_runs_[2], 0);
}

TEST_F(EvaluatorGpu, a_kernel_for_the_wrong_layout_is_a_wrong_result) {
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::T, 256, 256, 256);
  ASSERT_TRUE(evaluator().prepare(p, kQuick, {}, false).ok);
  const CompiledKernel& nn = Kernels::get(arch_).at(0, Op::N, Op::N);
  ASSERT_TRUE(nn.ok) << nn.error;
  const TrialResult r = evaluator().evaluate(sample_configs()[0], nn.cubin);
  EXPECT_EQ(r.status, TrialStatus::wrong_result) << r.error;
  EXPECT_GT(r.max_rel_error, 0.1);
  EXPECT_NE(r.error.find("C["), std::string::npos) << r.error;
  EXPECT_FALSE(evaluator().context_broken());
}

TEST_F(EvaluatorGpu, unloadable_cubins_and_unsupported_problems_are_not_crashes) {
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 128, 128, 127);  // lda 127: VEC 1 only
  ASSERT_TRUE(evaluator().prepare(p, kQuick, {}, false).ok);
  const std::vector<char> garbage = {'n', 'o', 't', ' ', 'a', ' ', 'c', 'u', 'b', 'i', 'n'};
  const TrialResult bad = evaluator().evaluate(sample_configs()[2], garbage);
  EXPECT_EQ(bad.status, TrialStatus::launch_failed) << bad.error;
  EXPECT_FALSE(evaluator().context_broken());

  const CompiledKernel& vec4 = Kernels::get(arch_).at(0, Op::N, Op::N);
  const TrialResult invalid = evaluator().evaluate(sample_configs()[0], vec4.cubin);
  EXPECT_EQ(invalid.status, TrialStatus::invalid);
  EXPECT_NE(invalid.error.find("VEC=4"), std::string::npos) << invalid.error;

  const CompiledKernel& vec1 = Kernels::get(arch_).at(2, Op::N, Op::N);
  const TrialResult ok = evaluator().evaluate(sample_configs()[2], vec1.cubin);
  EXPECT_EQ(ok.status, TrialStatus::ok) << ok.error;
}

TEST_F(EvaluatorGpu, times_and_compares_a_correct_kernel_with_cublas) {
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 1024, 1024, 1024);
  const TimingOptions timing{2, 10, 100, 500, 0.02};
  const CublasTiming cublas = evaluator().prepare(p, timing, {}, true);
  ASSERT_TRUE(cublas.ok) << cublas.error;
  const CompiledKernel& k = Kernels::get(arch_).at(0, Op::N, Op::N);
  const TrialResult r = evaluator().evaluate(sample_configs()[0], k.cubin);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.error;
  EXPECT_GE(r.runs, 10);
  EXPECT_LE(r.runs, 100);
  EXPECT_GT(r.time_min_us, 0);
  EXPECT_LE(r.time_min_us, r.time_median_us);
  EXPECT_LE(r.time_median_us, r.time_max_us);
  EXPECT_NEAR(r.tflops, p.flops() / r.time_median_us * 1e-6, 1e-9 * r.tflops);
  EXPECT_GT(r.tflops, 1.0);  // any working FP32 kernel on a datacenter GPU
  const Comparison c = evaluator().compare(sample_configs()[0], k.cubin);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_GT(c.tgemm_median_us, 0);
  EXPECT_GT(c.cublas_median_us, 0);
  EXPECT_GE(c.runs, 10);
  std::printf("1024^3 NN: tgemm %.1f us (%.2f TFLOP/s), cuBLAS %.1f us; interleaved %.1f vs %.1f\n",
              r.time_median_us, r.tflops, cublas.median_us, c.tgemm_median_us, c.cublas_median_us);
}

// The tuner's cutoff: a kernel over it on both of two warm runs is recorded with the faster
// of them; one under it is timed in full.
TEST_F(EvaluatorGpu, a_kernel_over_the_cutoff_is_recorded_after_two_runs) {
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 1024, 1024, 1024);
  const TimingOptions timing{2, 10, 100, 500, 0.02};
  ASSERT_TRUE(evaluator().prepare(p, timing, {}, false).ok);
  const CompiledKernel& k = Kernels::get(arch_).at(0, Op::N, Op::N);
  const TrialResult cut = evaluator().evaluate(sample_configs()[0], k.cubin, 1e-6);
  ASSERT_EQ(cut.status, TrialStatus::ok) << cut.error;
  EXPECT_EQ(cut.runs, 2);
  EXPECT_EQ(cut.time_median_us, cut.time_min_us);  // the faster run stands for the kernel
  EXPECT_LE(cut.time_min_us, cut.time_max_us);
  const TrialResult full = evaluator().evaluate(sample_configs()[0], k.cubin, 1e9);
  ASSERT_EQ(full.status, TrialStatus::ok) << full.error;
  EXPECT_GE(full.runs, 10);
}

}  // namespace
}  // namespace tgemm
