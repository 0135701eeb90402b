// gemv_mma on a GPU: both small sides (1..16) in every layout, so both loops (the large operand
// along L and along K); f32x3 to the FFMA GEMV's accuracy and tf32 to its own; one K slice
// (alpha and beta stored) and many (atomics after C = beta * C); the large side off the block's
// strip and off a multiple of 4, K off a chunk; padded leading dimensions, and the large
// operand's 16-byte alignment refused with its reason. Against a double-precision host
// reference. Skips cleanly without a GPU or before sm_80.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/direct_gemm.h"

namespace tgemm {
namespace {

KernelConfig config(int64_t side, int64_t warps, int64_t lw, int64_t kb) {
  return KernelConfig::from_params_text(
      "gemv_mma", fmt::format("SIDE={},WARPS={},LW={},KB={}", side, warps, lw, kb));
}

class GemvMmaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
    if (arch_number(arch_) < 80) GTEST_SKIP() << "tf32 mma needs sm_80";
  }

  // The build of `config` as `type` in layout (a, b), once per test.
  const CompiledKernel& built(const KernelConfig& config, const char* type, Op a, Op b) {
    const std::string key =
        fmt::format("{} {} {}{}", config.canonical_name(), type, to_string(a), to_string(b));
    auto it = builds_.find(key);
    if (it == builds_.end())
      it = builds_
               .emplace(key,
                        build_kernel(template_named("gemv_mma"), config,
                                     Problem::packed(parse_gemm_types(type), a, b, 1, 1, 1), arch_))
               .first;
    return it->second;
  }

  // One case of `config` as `type` in layout (a, b), every row padded by `pad`: its relative
  // error, or the family's reason to refuse it in *why.
  double error_of(const KernelConfig& config, const char* type, Op a, Op b, int m, int n, int k,
                  int pad, float beta, std::string* why) {
    const CompiledKernel& kernel = built(config, type, a, b);
    EXPECT_TRUE(kernel.ok) << config.canonical_name() << " " << type << "\n" << kernel.error;
    if (!kernel.ok) return INFINITY;
    testing::DirectGemm g = testing::DirectGemm::make(a, b, m, n, k, pad, 0, 1.25f, beta,
                                                      uint32_t(m * 131 + n * 7 + k));
    g.types = parse_gemm_types(type);
    const std::vector<float> c = g.run(config, kernel.cubin, why, arch_);
    return why->empty() ? g.relative_error(c) : INFINITY;
  }

  std::map<std::string, CompiledKernel> builds_;
  std::string arch_;
};

// The large operand's rows padded to a multiple of 4 floats (its 16-byte loads).
int aligned_pad(int64_t side, Op a, Op b, int m, int n, int k) {
  const int row = side == 0 ? (b == Op::N ? n : k) : (a == Op::N ? k : m);
  return (4 - row % 4) % 4;
}

TEST_F(GemvMmaGpu, f32x3_is_as_accurate_as_ffma_and_tf32_as_tf32_on_both_sides_and_loops) {
  struct Run {
    KernelConfig config;
    const char* type;
    double bound;
  };
  for (int64_t side : {0, 1}) {
    const std::vector<Run> runs = {{config(side, 4, 1, 256), "f32x3", 1e-5},
                                   {config(side, 4, 1, 256), "tf32", 5e-3},
                                   {config(side, 2, 2, 128), "f32x3", 1e-5},
                                   {config(side, 8, 4, 1024), "f32x3", 1e-5}};
    for (const Run& r : runs)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (int small : {1, 5, 16})
            for (auto [large, k, beta] : {std::tuple{1000, 777, 0.0f}, std::tuple{129, 2049, 0.5f},
                                          std::tuple{4096, 64, -1.0f}, std::tuple{37, 1, 0.0f}}) {
              const int m = side == 0 ? small : large, n = side == 0 ? large : small;
              std::string why;
              const double error = error_of(r.config, r.type, a, b, m, n, k,
                                            aligned_pad(side, a, b, m, n, k), beta, &why);
              const std::string what =
                  fmt::format("{} {} {}{} {}x{}x{} beta {}", r.config.canonical_name(), r.type,
                              to_string(a), to_string(b), m, n, k, beta);
              EXPECT_TRUE(why.empty()) << what << ": " << why;
              EXPECT_LT(error, r.bound) << what;
            }
  }
}

// One TF32 pass misses f32x3's bound, so that bound tells a kernel that drops the small parts.
TEST_F(GemvMmaGpu, one_tf32_pass_misses_the_f32x3_bound) {
  for (Op b : {Op::N, Op::T}) {  // both loops
    std::string why;
    const double error = error_of(config(0, 4, 1, 256), "tf32", Op::N, b, 16, 1000, 777,
                                  aligned_pad(0, Op::N, b, 16, 1000, 777), 0.0f, &why);
    ASSERT_TRUE(why.empty()) << why;
    EXPECT_GT(error, 1e-5) << to_string(b);
  }
}

TEST_F(GemvMmaGpu, a_large_operand_off_16_bytes_is_refused_with_the_reason) {
  std::string why;
  error_of(config(0, 4, 1, 256), "f32x3", Op::N, Op::N, 16, 1000, 64, 1, 0.0f, &why);  // ldb 1001
  EXPECT_NE(why.find("aligned to 16 bytes"), std::string::npos) << why;
  why.clear();
  error_of(config(1, 4, 1, 256), "f32x3", Op::N, Op::N, 1000, 16, 63, 0, 0.0f, &why);  // lda 63
  EXPECT_NE(why.find("aligned to 16 bytes"), std::string::npos) << why;
}

}  // namespace
}  // namespace tgemm
