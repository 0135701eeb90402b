// gemv_mma on a GPU: M = 1..16 with B streamed along N and A stored either way; f32x3 to the
// FFMA GEMV's accuracy and tf32 to its own; one K slice (alpha and beta stored) and many
// (atomics after C = beta * C); N off the block's strip and off a multiple of 4; padded leading
// dimensions, and B's 16-byte alignment refused with its reason. Against a double-precision host
// reference. Skips cleanly without a GPU or before sm_80.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/direct_gemm.h"

namespace tgemm {
namespace {

KernelConfig config(int64_t warps, int64_t lw, int64_t kb) {
  return KernelConfig::from_params_text("gemv_mma",
                                        fmt::format("WARPS={},LW={},KB={}", warps, lw, kb));
}

class GemvMmaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
    if (arch_number(arch_) < 80) GTEST_SKIP() << "tf32 mma needs sm_80";
  }

  // The build of `config` as `type` with A stored as `a`, once per test.
  const CompiledKernel& built(const KernelConfig& config, const char* type, Op a) {
    const std::string key = fmt::format("{} {} {}", config.canonical_name(), type, to_string(a));
    auto it = builds_.find(key);
    if (it == builds_.end())
      it = builds_
               .emplace(key, build_kernel(
                                 template_named("gemv_mma"), config,
                                 Problem::packed(parse_gemm_types(type), a, Op::N, 1, 1, 1), arch_))
               .first;
    return it->second;
  }

  // One case of `config` as `type` (A stored as `a`, B K x N with rows padded by `pad`):
  // its relative error, or the family's reason to refuse it in *why.
  double error_of(const KernelConfig& config, const char* type, Op a, int m, int n, int k, int pad,
                  float beta, std::string* why) {
    const CompiledKernel& kernel = built(config, type, a);
    EXPECT_TRUE(kernel.ok) << config.canonical_name() << " " << type << "\n" << kernel.error;
    if (!kernel.ok) return INFINITY;
    testing::DirectGemm g = testing::DirectGemm::make(a, Op::N, m, n, k, pad, 0, 1.25f, beta,
                                                      uint32_t(m * 131 + n * 7 + k));
    g.types = parse_gemm_types(type);
    const std::vector<float> c = g.run(config, kernel.cubin, why, arch_);
    return why->empty() ? g.relative_error(c) : INFINITY;
  }

  std::map<std::string, CompiledKernel> builds_;
  std::string arch_;
};

TEST_F(GemvMmaGpu, f32x3_is_as_accurate_as_ffma_and_tf32_as_tf32) {
  for (const KernelConfig& c : {config(4, 1, 256), config(2, 2, 128), config(8, 4, 1024)})
    for (auto [type, bound] : {std::pair{"f32x3", 1e-5}, std::pair{"tf32", 5e-3}})
      for (Op a : {Op::N, Op::T})
        for (int m : {1, 5, 16})
          for (auto [n, k, beta] : {std::tuple{1000, 777, 0.0f}, std::tuple{129, 2049, 0.5f},
                                    std::tuple{4096, 64, -1.0f}, std::tuple{37, 1, 0.0f}}) {
            std::string why;
            const int pad = (4 - n % 4) % 4;  // B's rows 16-byte aligned
            const double error = error_of(c, type, a, m, n, k, pad, beta, &why);
            EXPECT_TRUE(why.empty()) << why;
            EXPECT_LT(error, bound) << fmt::format("{} {} {}N {}x{}x{} beta {}", c.canonical_name(),
                                                   type, to_string(a), m, n, k, beta);
          }
}

// One TF32 pass misses f32x3's bound, so that bound tells a kernel that drops the small parts.
TEST_F(GemvMmaGpu, one_tf32_pass_misses_the_f32x3_bound) {
  std::string why;
  const double error = error_of(config(4, 1, 256), "tf32", Op::N, 16, 1000, 777, 0, 0.0f, &why);
  ASSERT_TRUE(why.empty()) << why;
  EXPECT_GT(error, 1e-5);
}

TEST_F(GemvMmaGpu, b_rows_off_16_bytes_are_refused_with_the_reason) {
  std::string why;
  error_of(config(4, 1, 256), "f32x3", Op::N, 16, 1000, 64, 1, 0.0f, &why);  // ldb 1001
  EXPECT_NE(why.find("aligned to 16 bytes"), std::string::npos) << why;
}

}  // namespace
}  // namespace tgemm
