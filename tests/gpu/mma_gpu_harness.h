// What the tensor-core GPU suites (gemm_mma, gemm_wgmma) share: their configs built once for
// every type and layout, and a fixture that runs each config on a problem through the
// evaluator (cuBLAS reference, poisoned C), expecting ok from a config the family supports and
// invalid from any other.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm::testing {

// A gemm_mma config by its parameters in the space's order (SHIFT_COPY 0; PACK not set: 0).
inline KernelConfig mma(int64_t bm, int64_t bn, int64_t bk_bytes, int64_t wm, int64_t wn,
                        int64_t stages, int64_t vec_bytes, int64_t smem_xor, int64_t split_k,
                        int64_t swizzle) {
  return {"gemm_mma",
          {{"BM", bm},
           {"BN", bn},
           {"BK_BYTES", bk_bytes},
           {"WM", wm},
           {"WN", wn},
           {"STAGES", stages},
           {"VEC_BYTES", vec_bytes},
           {"SMEM_XOR", smem_xor},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle},
           {"SHIFT_COPY", 0}}};
}

// How the tensor-core tests store a problem: leading dimensions of row length + 1 (4097 and
// 1023 in miniature, rows misaligned), or every pointer one element past a 16-byte boundary
// (`b_pointer_bytes`: B's offset in bytes, to keep B wider than one element), or rows padded
// to whole 16 bytes (odd sizes with aligned rows, as a caller's padded allocation).
enum class Storage { packed, ld_plus_one, pointers_off, ld_padded16 };
inline Problem stored(Problem p, Storage storage, int b_pointer_bytes = 0) {
  const int element = element_bytes(p.types.a), c_element = element_bytes(p.types.c);
  if (storage == Storage::ld_plus_one) {
    p.lda = p.a_cols() + 1;
    p.ldb = p.b_cols() + 1;
    p.ldc = p.n + 1;
    p.align_a = alignment_bytes(p.lda, 0, element);
    p.align_b = alignment_bytes(p.ldb, 0, element);
    p.align_c = alignment_bytes(p.ldc, 0, c_element);
  } else if (storage == Storage::ld_padded16) {
    const auto padded = [](int64_t cols, int bytes) {
      const int64_t per = 16 / bytes;
      return (cols + per - 1) / per * per;
    };
    p.lda = padded(p.a_cols(), element);
    p.ldb = padded(p.b_cols(), element);
    p.ldc = padded(p.n, c_element);
    p.align_a = p.align_b = p.align_c = 16;
  } else if (storage == Storage::pointers_off) {
    p.align_a = element;
    p.align_b = std::max(element, b_pointer_bytes);
    p.align_c = c_element;
  }
  return p;
}

inline const std::vector<const char*> kMmaTypes = {"f16",          "f16_out_f32", "bf16",
                                                   "bf16_out_f32", "tf32",        "f32x3"};

// Every config for every type (kMmaTypes, or a suite's own list) and layout, compiled in
// parallel; a config the family refuses for a type (a static_assert would stop it) is left
// unbuilt. Tests name a type by its index in the list.
class MmaKernels {
 public:
  MmaKernels(const std::vector<KernelConfig>& configs, const std::string& arch,
             const std::string& family_name = "gemm_mma",
             const std::vector<const char*>& types = kMmaTypes)
      : count_(configs.size()), compiled_(types.size() * configs.size() * 4) {
    const GemmTemplate& family = template_named(family_name);
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < compiled_.size(); i = next++) {
        const Op b = i % 2 ? Op::T : Op::N, a = (i / 2) % 2 ? Op::T : Op::N;
        const size_t config = (i / 4) % count_, type = i / 4 / count_;
        const Problem v = Problem::packed(parse_gemm_types(types[type]), a, b, 64, 64, 64);
        if (!family.unsupported_reason(configs[config], v, arch))
          compiled_[i] = build_kernel(family, configs[config], v, arch);
      }
    };
    std::vector<std::thread> pool;
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  const CompiledKernel& at(size_t type, size_t config, Op a, Op b) const {
    return compiled_[((type * count_ + config) * 2 + (a == Op::T)) * 2 + (b == Op::T)];
  }

 private:
  size_t count_;
  std::vector<CompiledKernel> compiled_;
};

inline GemmEvaluator& mma_evaluator() {
  static GemmEvaluator* e = new GemmEvaluator(0);  // never destroyed: see the evaluator test
  return *e;
}

inline const TimingOptions kMmaQuick{0, 1, 1, 1.0, 0.5};

class MmaGpuTest : public ::testing::Test {
 protected:
  explicit MmaGpuTest(const std::vector<KernelConfig>& configs, std::string family = "gemm_mma")
      : configs_(configs), family_(std::move(family)) {}
  // The suite's configs built for arch_ (one static per suite).
  virtual const MmaKernels& kernels() const = 0;

  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
    if (arch_number(arch_) < 80) GTEST_SKIP() << "the cases need sm_80 (bf16, tf32, cp.async)";
  }

  // Evaluates every config on `problem` (of the suite's types[type]): a config the family
  // supports must be ok, any other invalid. Surprises go to failures_.
  void run_case(size_t type, const Problem& problem, float alpha, float beta) {
    const std::string what = fmt::format("{} lda {} ldb {} ldc {} alpha {} beta {}", problem.key(),
                                         problem.lda, problem.ldb, problem.ldc, alpha, beta);
    const CublasTiming prepared =
        mma_evaluator().prepare(problem, kMmaQuick, GemmScalars{alpha, beta}, false);
    if (!prepared.ok) {
      failures_.push_back(what + ": prepare failed: " + prepared.error);
      return;
    }
    for (size_t i = 0; i < configs_.size(); ++i) {
      const KernelConfig& config = configs_[i];
      const bool supported = !template_named(family_).unsupported_reason(config, problem, arch_);
      const CompiledKernel& kernel = kernels().at(type, i, problem.op_a, problem.op_b);
      if (kernel.cubin.empty()) {  // refused for the type: nothing was built
        if (kernel.ok || !kernel.error.empty())
          failures_.push_back(config.canonical_name() + ": compile failed: " + kernel.error);
        continue;
      }
      const TrialResult r = mma_evaluator().evaluate(config, kernel.cubin);
      const TrialStatus expected = supported ? TrialStatus::ok : TrialStatus::invalid;
      if (r.status != expected)
        failures_.push_back(fmt::format("{} on {}: {} ({}), expected {}", config.canonical_name(),
                                        what, to_string(r.status), r.error, to_string(expected)));
      if (r.status == TrialStatus::ok) ++ok_runs_[{type, i}];
      ASSERT_FALSE(mma_evaluator().context_broken()) << config.canonical_name() << " on " << what;
    }
  }

  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  // run_case over every layout, shape and storage variant (0 packed with beta 0; 1 and 2 as
  // `problem_of` stores them, alpha and beta not 1 and 0) of type's problems.
  template <typename ProblemOf>
  void run_every_layout_and_storage(size_t type, const std::vector<Shape>& shapes,
                                    ProblemOf problem_of) {
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [m, n, k] : shapes)
          for (int variant = 0; variant < 3; ++variant) {
            const Problem p = problem_of(type, a, b, m, n, k, variant);
            if (variant == 0)
              run_case(type, p, 1.0f, 0.0f);
            else
              run_case(type, p, variant == 1 ? 1.25f : -1.5f, variant == 1 ? 0.5f : 0.75f);
          }
  }

  void expect_no_failures() {
    std::string all;
    for (size_t i = 0; i < failures_.size() && i < 40; ++i) all += failures_[i] + "\n";
    EXPECT_TRUE(failures_.empty()) << failures_.size() << " failure(s):\n" << all;
  }

  const std::vector<KernelConfig>& configs_;
  const std::string family_;
  std::string arch_;
  std::vector<std::string> failures_;
  std::map<std::pair<size_t, size_t>, int> ok_runs_;
};

}  // namespace tgemm::testing
