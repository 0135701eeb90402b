// gemv_mma without a GPU: the corners of its shipped space compile for sm_80 and sm_90, both
// small sides in every layout (both loops), f32x3 and tf32, without spills; f32x3 issues three
// mma per n tile and tf32 one on both loops; its space is legal from sm_80 only.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/template_ptx.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const char* kSpace = TGEMM_SOURCE_DIR "/configs/spaces/gemv_mma.yaml";

const GemmTemplate& family() { return template_named("gemv_mma"); }

KernelConfig config(int64_t side, int64_t warps, int64_t lw, int64_t kb) {
  return KernelConfig::from_params_text(
      "gemv_mma", fmt::format("SIDE={},WARPS={},LW={},KB={}", side, warps, lw, kb));
}

size_t count_of(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

void expect_compiles_clean(const KernelConfig& c, const char* type, Op a, Op b,
                           const std::string& arch) {
  const std::string what =
      fmt::format("{} {} {}{} {}", c.canonical_name(), type, to_string(a), to_string(b), arch);
  const CompiledKernel k =
      build_kernel(family(), c, Problem::packed(parse_gemm_types(type), a, b, 1, 1, 1), arch);
  ASSERT_TRUE(k.ok) << what << "\n" << k.error;
  ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
  EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
  EXPECT_EQ(k.resources.spill_load_bytes, 0) << what;
  EXPECT_EQ(resource_violation(k, family().block_resources(c), arch_limits(arch)), std::nullopt)
      << what;
}

class GemvMmaCompiles : public ::testing::TestWithParam<const char*> {};

// The most registers and shared memory (LW=4, KB=1024) and the fewest threads, as f32x3 (the
// larger build) in every layout of both sides; tf32 once per layout.
TEST_P(GemvMmaCompiles, corners_of_the_space_compile_without_spills) {
  const std::string arch = GetParam();
  for (int64_t side : {0, 1})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) {
        for (const KernelConfig& c : {config(side, 8, 4, 1024), config(side, 2, 1, 128)})
          expect_compiles_clean(c, "f32x3", a, b, arch);
        if (side == 0) expect_compiles_clean(config(side, 4, 2, 256), "tf32", a, b, arch);
      }
}

INSTANTIATE_TEST_SUITE_P(Archs, GemvMmaCompiles, ::testing::Values("sm_80", "sm_90"));

// LW=1, two steps per loop turn: along L four n tiles per k8-step, along K four k8-steps per
// chunk of one n tile; 8 mma for tf32 and 24 for f32x3 on each loop.
TEST(GemvMmaPtx, f32x3_issues_three_tf32_mma_per_tile_and_tf32_one_on_both_loops) {
  const auto mmas = [](const char* type, Op b) {
    const std::string ptx = testing::template_ptx(
        family(), config(0, 4, 1, 256), Problem::packed(parse_gemm_types(type), Op::N, b, 1, 1, 1),
        "compute_80");
    EXPECT_FALSE(ptx.empty());
    return count_of(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  };
  for (Op b : {Op::N, Op::T}) {
    EXPECT_EQ(mmas("tf32", b), 8u) << to_string(b);
    EXPECT_EQ(mmas("f32x3", b), 24u) << to_string(b);
  }
}

TEST(GemvMmaSpace, covers_tf32_and_f32x3_from_sm_80_only) {
  const SearchSpace space = SearchSpace::load(kSpace);
  EXPECT_EQ(space.enumerate(arch_limits("sm_80")).legal.size(), 72u);
  EXPECT_EQ(space.enumerate(arch_limits("sm_90")).legal.size(), 72u);
  EXPECT_THROW(space.enumerate(arch_limits("sm_75")), Error);
  const GemmTemplate& family = template_named("gemv_mma");
  for (const char* type : {"tf32", "f32x3"}) {
    EXPECT_TRUE(family.types_unsupported(parse_gemm_types(type), "sm_75")) << type;
    EXPECT_FALSE(family.types_unsupported(parse_gemm_types(type), "sm_80")) << type;
  }
  EXPECT_TRUE(family.types_unsupported(GemmTypes{}, "sm_90"));  // FFMA f32 is not its
}

}  // namespace
}  // namespace tgemm
