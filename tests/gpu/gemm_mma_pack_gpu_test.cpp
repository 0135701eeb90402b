// gemm_mma PACK=1 on a GPU, through the evaluator (cuBLAS FP32 reference, poisoned C): every
// type (f16 and bf16 with f16/bf16 or f32 C, tf32, f32x3), the four layouts, odd and prime
// shapes, leading dimensions of row length + 1 and pointers one element off (2- and 4-byte
// alignment, which only the packs can read with 16-byte copies), beta != 0, split-K, and
// PACK=2's transposed f32 operands.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <tuple>

#include "src/core/device_info.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

KernelConfig packed(int64_t bm, int64_t bn, int64_t bk_bytes, int64_t wm, int64_t wn,
                    int64_t stages, int64_t smem_xor, int64_t split_k, int64_t swizzle,
                    int64_t pack = 1) {
  return {"gemm_mma",
          {{"BM", bm},
           {"BN", bn},
           {"BK_BYTES", bk_bytes},
           {"WM", wm},
           {"WN", wn},
           {"STAGES", stages},
           {"VEC_BYTES", 16},
           {"SMEM_XOR", smem_xor},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle},
           {"SHIFT_COPY", 0},
           {"PACK", pack}}};
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

const std::vector<const char*> kTypes = {"f16",          "f16_out_f32", "bf16",
                                         "bf16_out_f32", "tf32",        "f32x3"};

// Every config for every type and layout, compiled once in parallel (refused ones left out).
class Kernels {
 public:
  static const Kernels& get(const std::string& arch) {
    static const Kernels kernels(arch);
    return kernels;
  }
  const CompiledKernel& at(size_t type, size_t config, Op a, Op b) const {
    return compiled_[index(type, config, a, b)];
  }

 private:
  static size_t index(size_t type, size_t config, Op a, Op b) {
    return ((type * configs().size() + config) * 2 + (a == Op::T)) * 2 + (b == Op::T);
  }
  explicit Kernels(const std::string& arch) : compiled_(kTypes.size() * configs().size() * 4) {
    const GemmTemplate& family = template_named("gemm_mma");
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < compiled_.size(); i = next++) {
        const Op b = i % 2 ? Op::T : Op::N, a = (i / 2) % 2 ? Op::T : Op::N;
        const size_t config = (i / 4) % configs().size(), type = i / 4 / configs().size();
        const Problem v = Problem::packed(parse_gemm_types(kTypes[type]), a, b, 64, 64, 64);
        if (!family.unsupported_reason(configs()[config], v, arch))
          compiled_[i] = build_kernel(family, configs()[config], v, arch);
      }
    };
    std::vector<std::thread> pool;
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  std::vector<CompiledKernel> compiled_;
};

GemmEvaluator& evaluator() {
  static GemmEvaluator* e = new GemmEvaluator(0);  // never destroyed: see the evaluator test
  return *e;
}

const TimingOptions kQuick{0, 1, 1, 1.0, 0.5};

class GemmMmaPackGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
    if (arch_number(arch_) < 80) GTEST_SKIP() << "the cases need sm_80 (bf16, tf32, cp.async)";
  }

  // Every config on `problem`: one the family supports must be ok, any other invalid.
  void run_case(size_t type, const Problem& problem, float alpha, float beta) {
    const std::string what = fmt::format("{} lda {} ldb {} ldc {} alpha {} beta {}", problem.key(),
                                         problem.lda, problem.ldb, problem.ldc, alpha, beta);
    const CublasTiming prepared =
        evaluator().prepare(problem, kQuick, GemmScalars{alpha, beta}, false);
    if (!prepared.ok) {
      failures_.push_back(what + ": prepare failed: " + prepared.error);
      return;
    }
    for (size_t i = 0; i < configs().size(); ++i) {
      const KernelConfig& config = configs()[i];
      const bool supported = !template_named("gemm_mma").unsupported_reason(config, problem, arch_);
      const CompiledKernel& kernel = Kernels::get(arch_).at(type, i, problem.op_a, problem.op_b);
      if (kernel.cubin.empty()) {
        if (kernel.ok || !kernel.error.empty())
          failures_.push_back(config.canonical_name() + ": compile failed: " + kernel.error);
        continue;
      }
      const TrialResult r = evaluator().evaluate(config, kernel.cubin);
      const TrialStatus expected = supported ? TrialStatus::ok : TrialStatus::invalid;
      if (r.status != expected)
        failures_.push_back(fmt::format("{} on {}: {} ({}), expected {}", config.canonical_name(),
                                        what, to_string(r.status), r.error, to_string(expected)));
      if (r.status == TrialStatus::ok) ++ok_runs_[{type, i}];
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
  std::map<std::pair<size_t, size_t>, int> ok_runs_;
};

// variant 0: packed storage; 1: leading dimensions of row length + 1; 2: every pointer one
// element past a 16-byte boundary.
Problem variant_of(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, int variant) {
  Problem p = Problem::packed(parse_gemm_types(kTypes[type]), a, b, m, n, k);
  const int element = element_bytes(p.types.a), c_element = element_bytes(p.types.c);
  p.beta_zero = variant == 0;
  if (variant == 1) {
    p.lda = p.a_cols() + 1;
    p.ldb = p.b_cols() + 1;
    p.ldc = p.n + 1;
    p.align_a = alignment_bytes(p.lda, 0, element);
    p.align_b = alignment_bytes(p.ldb, 0, element);
    p.align_c = alignment_bytes(p.ldc, 0, c_element);
  } else if (variant == 2) {
    p.align_a = p.align_b = element;
    p.align_c = c_element;
  }
  return p;
}

TEST_F(GemmMmaPackGpu, every_type_and_layout_is_correct_at_any_alignment) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  const std::vector<Shape> shapes = {{64, 64, 64},    {97, 61, 131},   {1, 7, 3},
                                     {257, 300, 520}, {33, 513, 1000}, {255, 129, 67}};
  for (size_t type = 0; type < kTypes.size(); ++type)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes)
          for (int variant = 0; variant < 3; ++variant) {
            const Problem p = variant_of(type, a, b, m, n, k, variant);
            if (variant == 0)
              run_case(type, p, 1.0f, 0.0f);
            else
              run_case(type, p, variant == 1 ? 1.25f : -1.5f, variant == 1 ? 0.5f : 0.75f);
          }
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
