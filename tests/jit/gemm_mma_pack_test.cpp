// gemm_mma's PACK=1 without a GPU: its configs compile for sm_75 (f16), sm_80 and sm_90 in
// every layout without spills and hold the pack entries; a misaligned problem's plan packs A
// and B into a workspace of the size the kernel reads; the space and the host side refuse
// what PACK cannot run, with a reason; the dispatcher's defaults take PACK for misaligned
// problems only.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "src/dispatch/kernel_selector.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/mma_configs.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const GemmTemplate& mma() { return template_named("gemm_mma"); }

// The PACK default's shape: 128-byte slices, swizzle 8, PACK=1.
KernelConfig pack_config(std::initializer_list<std::pair<const char*, int64_t>> overrides = {}) {
  KernelConfig c = testing::mma_config({{"BK_BYTES", 128}, {"SWIZZLE", 8}, {"PACK", 1}});
  for (const auto& [name, value] : overrides) c.set(name, value);
  return c;
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

Problem misaligned(const char* type, int64_t m, int64_t n, int64_t k, Op a = Op::N, Op b = Op::N) {
  Problem p = Problem::packed(parse_gemm_types(type), a, b, m, n, k);
  p.align_a = p.align_b = p.align_c = element_bytes(p.types.a);
  return p;
}

TEST(GemmMmaPack, configs_compile_for_every_arch_and_layout_without_spills) {
  struct Case {
    const char* type;
    const char* arch;
    KernelConfig config;
  };
  const std::vector<Case> cases = {
      {"f16", "sm_75", pack_config({{"BK_BYTES", 64}, {"STAGES", 2}, {"WN", 32}})},
      {"f16", "sm_90", pack_config()},
      {"bf16", "sm_80", pack_config({{"BM", 64}, {"BN", 64}, {"WM", 32}, {"WN", 32}})},
      {"f16_out_f32", "sm_90", pack_config({{"SPLIT_K", 4}, {"SMEM_XOR", 0}})},
      {"tf32", "sm_90", pack_config({{"BK_BYTES", 64}, {"STAGES", 4}})},
      {"f32x3", "sm_80", pack_config({{"BK_BYTES", 64}, {"WN", 32}})},
      {"tf32", "sm_90", pack_config({{"BK_BYTES", 64}, {"STAGES", 4}, {"PACK", 2}})},
      {"f32x3", "sm_80", pack_config({{"BK_BYTES", 64}, {"WN", 32}, {"PACK", 2}})},
  };
  for (const Case& c : cases)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) {
        const GemmTypes types = parse_gemm_types(c.type);
        const std::string what = fmt::format("{} {} {}{} {}", c.config.canonical_name(),
                                             types.name(), to_string(a), to_string(b), c.arch);
        const CompiledKernel k =
            build_kernel(mma(), c.config, Problem::packed(types, a, b, 1, 1, 1), c.arch);
        ASSERT_TRUE(k.ok) << what << "\n" << k.error;
        ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
        EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
        EXPECT_EQ(k.resources.spill_load_bytes, 0) << what;
        EXPECT_EQ(resource_violation(k, mma().block_resources(c.config), arch_limits(c.arch)),
                  std::nullopt)
            << what;
        const std::string cubin(k.cubin.begin(), k.cubin.end());
        EXPECT_TRUE(contains(cubin, "gemm_mma_pack_a")) << what;
        EXPECT_TRUE(contains(cubin, "gemm_mma_pack_b")) << what;
      }
}

// 4097^3 f16, 2-byte aligned: each operand padded to whole 128 x 64 tiles (4224 x 4160
// elements), packed one after the other, then the main launch reads them.
TEST(GemmMmaPack, plan_packs_a_and_b_into_the_workspace_before_the_main_launch) {
  const Problem p = misaligned("f16", 4097, 4097, 4097);
  const KernelConfig config = pack_config();
  ASSERT_EQ(mma().unsupported_reason(config, p, "sm_90"), std::nullopt);
  const std::vector<std::string> entries = mma().entries(config);
  ASSERT_EQ(entries.size(), 4u);
  const LaunchPlan plan = mma().plan_launch(config, p);
  ASSERT_EQ(plan.count, 3);
  EXPECT_EQ(entries[size_t(plan.launches[0].entry)], "gemm_mma_pack_a");
  EXPECT_EQ(entries[size_t(plan.launches[1].entry)], "gemm_mma_pack_b");
  EXPECT_EQ(plan.launches[2].entry, 0);
  const size_t one = size_t(4224) * 4160 * 2;
  EXPECT_EQ(plan.workspace_bytes, 2 * one);
  EXPECT_EQ(plan.launches[0].grid[0], unsigned(one / 16 / 256));  // a thread per 16 bytes
  EXPECT_EQ(plan.launches[0].block[0], 256u);
  EXPECT_EQ(plan.launches[2].grid[0], 33u);  // (4097 + 127) / 128 tiles of C
  // The same config without PACK has no pre-pass and no workspace (and refuses 2 bytes).
  EXPECT_TRUE(mma().unsupported_reason(pack_config({{"PACK", 0}}), p, "sm_90"));
  EXPECT_EQ(mma().entries(pack_config({{"PACK", 0}})).size(), 2u);
}

// Transposed f32 operands and split-K: tiles of 32 x 128 f32 (K-major), beta pass first.
TEST(GemmMmaPack, split_k_plan_scales_c_then_packs_transposed_operands) {
  const Problem p = misaligned("tf32", 1023, 517, 1001, Op::T, Op::T);
  const KernelConfig config = pack_config({{"SPLIT_K", 4}});
  ASSERT_EQ(mma().unsupported_reason(config, p, "sm_90"), std::nullopt);
  const LaunchPlan plan = mma().plan_launch(config, p);
  ASSERT_EQ(plan.count, 4);
  const std::vector<std::string> entries = mma().entries(config);
  EXPECT_EQ(entries[size_t(plan.launches[0].entry)], "gemm_mma_prepare_c");
  EXPECT_EQ(entries[size_t(plan.launches[1].entry)], "gemm_mma_pack_a");
  EXPECT_EQ(entries[size_t(plan.launches[2].entry)], "gemm_mma_pack_b");
  EXPECT_EQ(plan.launches[3].grid[2], 4u);
  // A^T is stored [k][m]: 1024 x 1024 (K to 32, M to 128); B^T [n][k]: 640 x 1024.
  EXPECT_EQ(plan.workspace_bytes, size_t(1024) * 1024 * 4 + size_t(640) * 1024 * 4);
}

// PACK=2, tf32 NN: A packed as it is ([m][k]), B transposed to [n][k] by 32 x 32 tiles.
TEST(GemmMmaPack, pack_2_transposes_k_major_f32_operands_to_k_contiguous) {
  const Problem p = misaligned("tf32", 4097, 1000, 999);
  const KernelConfig config = pack_config({{"BK_BYTES", 64}, {"STAGES", 4}, {"PACK", 2}});
  ASSERT_EQ(mma().unsupported_reason(config, p, "sm_90"), std::nullopt);
  const LaunchPlan plan = mma().plan_launch(config, p);
  ASSERT_EQ(plan.count, 3);
  EXPECT_EQ(plan.launches[0].block[0], 256u);  // A: the 16-byte pack
  EXPECT_EQ(plan.launches[0].block[1], 1u);
  EXPECT_EQ(plan.launches[1].block[0], 32u);  // B: the transposing one
  EXPECT_EQ(plan.launches[1].block[1], 8u);
  EXPECT_EQ(plan.launches[1].grid[0], 32u);         // K: 999 to 16s (1008), in 32s ...
  EXPECT_EQ(plan.launches[1].grid[1], 1024u / 32);  // ... N: 1000 to 128s (1024)
  EXPECT_EQ(plan.workspace_bytes, size_t(4224) * 1008 * 4 + size_t(1024) * 1008 * 4);
  // A^T B^T: A transposed to [m][k], B already [n][k].
  const Problem tt = misaligned("f32x3", 4097, 1000, 999, Op::T, Op::T);
  const LaunchPlan t = mma().plan_launch(config, tt);
  EXPECT_EQ(t.launches[0].block[1], 8u);
  EXPECT_EQ(t.launches[1].block[1], 1u);
  EXPECT_EQ(t.workspace_bytes, plan.workspace_bytes);
  auto why = mma().unsupported_reason(config, misaligned("bf16", 64, 64, 64), "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "PACK=2 transposes f32 operands")) << *why;
}

TEST(GemmMmaPack, refuses_narrow_copies_shift_copy_a_16_bit_split_and_a_huge_workspace) {
  const Problem p = misaligned("f16", 4097, 4097, 4097);
  auto why = mma().unsupported_reason(pack_config({{"VEC_BYTES", 8}}), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "PACK=1 reads the packed copies with 16-byte copies")) << *why;
  why = mma().unsupported_reason(pack_config({{"SHIFT_COPY", 1}, {"STAGES", 2}}), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "SHIFT_COPY=0 (have 16 and 1)")) << *why;
  why = mma().unsupported_reason(pack_config({{"SPLIT_K", 4}}), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "C is f16")) << *why;
  why = mma().unsupported_reason(pack_config(), p, "sm_75");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "STAGES=3 needs cp.async")) << *why;
  why = mma().unsupported_reason(pack_config(), misaligned("tf32", 16384, 16384, 16384), "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "2048 MiB of workspace")) << *why;
  EXPECT_TRUE(contains(*why, "at most 1024 MiB")) << *why;
  Problem odd = misaligned("tf32", 64, 64, 64);
  odd.align_a = 2;  // not even one f32
  why = mma().unsupported_reason(pack_config(), odd, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "aligned to one element (4 bytes; have 2 and 4)")) << *why;
}

TEST(GemmMmaPack, space_repeats_the_pack_constraint_with_its_reason) {
  const SearchSpace space = SearchSpace::load(TGEMM_SOURCE_DIR "/configs/spaces/gemm_mma.yaml");
  EXPECT_EQ(space.rejection(pack_config(), arch_limits("sm_90")), std::nullopt);
  auto why =
      space.rejection(pack_config({{"VEC_BYTES", 8}, {"BK_BYTES", 64}}), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "read the packed copies with 16-byte copies")) << *why;
  why = space.rejection(pack_config({{"STAGES", 2}, {"SHIFT_COPY", 1}}), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "PACK=1")) << *why;
}

// Untuned, a misaligned problem gets a PACK default of its type (f32x3: PACK=2, B transposed),
// an aligned one does not, except tf32, whose pack rounds to tf32 once (faster than the
// loop's cvt on the H200); on sm_90 gemm_wgmma takes every misaligned type (the 16-bit ones
// through its own PACK=1; tf32 and f32x3, always packed) and aligned f32x3, while
// gemm_tma_wgmma takes aligned 16-bit inputs (f16 -> f32 included) and tf32 (B packed in NN).
TEST(GemmMmaPack, defaults_serve_misaligned_problems_with_pack_and_aligned_ones_without) {
  KernelSelector s({}, shipped_default_kernels(), "sm_90", 132);
  KernelSelector ampere({}, shipped_default_kernels(), "sm_80", 108);
  for (const char* type : {"f16", "bf16", "tf32", "f32x3", "f16_out_f32"}) {
    SCOPED_TRACE(type);
    const char* sm_90_family = "gemm_wgmma";
    EXPECT_EQ(s.choose(misaligned(type, 4097, 4097, 4097)).config.template_name, sm_90_family);
    EXPECT_EQ(s.choose(misaligned(type, 1023, 1023, 1023)).config.template_name, sm_90_family);
    for (int64_t size : {4097, 1023}) {
      const KernelChoice c = ampere.choose(misaligned(type, size, size, size));
      ASSERT_EQ(c.config.template_name, "gemm_mma") << size;
      EXPECT_EQ(c.config.get_or("PACK", 0), std::string(type) == "f32x3" ? 2 : 1)
          << size << " " << c.config.canonical_name();
    }
    const KernelChoice big = ampere.choose(misaligned(type, 5124, 9124, 2560));
    EXPECT_NE(big.config.get_or("PACK", 0), 0) << big.config.canonical_name();
    // Aligned on sm_90: the TMA family but for f32x3; on sm_80 gemm_mma's, PACK=1 for tf32
    // alone.
    const Problem square = Problem::packed(parse_gemm_types(type), Op::N, Op::N, 4096, 4096, 4096);
    const bool tma = std::string(type) != "f32x3";
    EXPECT_EQ(s.choose(square).config.template_name, tma ? "gemm_tma_wgmma" : sm_90_family);
    const KernelChoice aligned = ampere.choose(square);
    ASSERT_EQ(aligned.config.template_name, "gemm_mma");
    EXPECT_EQ(aligned.config.get_or("PACK", 0), std::string(type) == "tf32" ? 1 : 0)
        << aligned.config.canonical_name();
  }
  KernelSelector t4({}, shipped_default_kernels(), "sm_75", 40);
  EXPECT_EQ(t4.choose(misaligned("f16", 4097, 4097, 4097)).config.get_or("PACK", 0), 1);
}

}  // namespace
}  // namespace tgemm
