// sgemm_warp (the warp-tiled FP32 family): representative configs compile for sm_75, sm_80
// and sm_90 in every layout without spills, its space is legal where it compiles and refuses
// cp.async pipelines on sm_75, and its host side asks only the alignment its copies need.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "src/core/arch_limits.h"
#include "src/launch/launch_plan.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const char* kSpace = TGEMM_SOURCE_DIR "/configs/spaces/sgemm_warp.yaml";

KernelConfig warp_config(std::initializer_list<std::pair<const char*, int64_t>> overrides = {}) {
  KernelConfig c{"sgemm_warp",
                 {{"BM", 256},
                  {"BN", 128},
                  {"BK", 8},
                  {"WM", 64},
                  {"WN", 64},
                  {"TM", 16},
                  {"TN", 8},
                  {"STAGES", 3},
                  {"VEC", 4},
                  {"SPLIT_K", 1},
                  {"TAIL_SPLIT", 1},
                  {"SWIZZLE", 8},
                  {"MIN_BLOCKS", 1},
                  {"PACK_B", 0}}};
  for (const auto& [name, value] : overrides) c.set(name, value);
  return c;
}

// 16x8 and 8x16 thread tiles, 64..256 threads, MIN_BLOCKS 1/2, STAGES 2/3/4, VEC 1/2/4, BK 8/16,
// split-K, a stream tail.
std::vector<KernelConfig> representative_configs() {
  return {
      warp_config(),  // cuBLAS's shape: 256x128x8, 8 warps 4x2, 16x8 per thread
      warp_config({{"BM", 128}, {"BN", 256}, {"TM", 8}, {"TN", 16}, {"STAGES", 4}, {"VEC", 2}}),
      warp_config(
          {{"BM", 128}, {"BN", 128}, {"WN", 32}, {"TM", 8}, {"TN", 8}, {"STAGES", 2}, {"VEC", 1}}),
      warp_config({{"BM", 128},
                   {"BN", 128},
                   {"BK", 16},
                   {"WM", 32},
                   {"TM", 8},
                   {"TN", 8},
                   {"STAGES", 4},
                   {"SPLIT_K", 4},
                   {"SWIZZLE", 1}}),
      warp_config({{"BM", 64},
                   {"BN", 64},
                   {"BK", 16},
                   {"WM", 32},
                   {"WN", 32},
                   {"TM", 4},
                   {"TN", 8},
                   {"STAGES", 3},
                   {"VEC", 1},
                   {"SPLIT_K", 16}}),
      warp_config({{"BM", 64},
                   {"BN", 128},
                   {"WM", 32},
                   {"TM", 8},
                   {"TN", 8},
                   {"STAGES", 2},
                   {"VEC", 2},
                   {"MIN_BLOCKS", 2}}),  // 128 threads, two blocks per SM
      warp_config({{"BM", 64},
                   {"BN", 128},
                   {"WM", 64},
                   {"WN", 32},
                   {"TM", 16},
                   {"TN", 4},
                   {"STAGES", 4},
                   {"VEC", 1},
                   {"MIN_BLOCKS", 2},
                   {"TAIL_SPLIT", 8}}),  // the last wave's tiles in 8 K slices
  };
}

// sm_75 has no cp.async: the same configs with the register-prefetch pipeline.
KernelConfig for_arch(KernelConfig c, const std::string& arch) {
  if (arch == "sm_75") c.set("STAGES", 2);
  return c;
}

class SgemmWarpCompiles : public ::testing::TestWithParam<const char*> {};

// PACK_B: the main kernel and the pack entry, for a B stored as [n][k] (transposing pack) and
// [k][n] (re-strided), legal and without spills.
TEST_P(SgemmWarpCompiles, pack_b_configs_compile_with_their_pack_entry) {
  const std::string arch = GetParam();
  const SearchSpace space = SearchSpace::load(kSpace);
  const KernelConfig c =
      for_arch(warp_config({{"BM", 128}, {"BN", 256}, {"STAGES", 4}, {"PACK_B", 1}}), arch);
  EXPECT_EQ(space.rejection(c, arch_limits(arch)), std::nullopt) << c.canonical_name();
  for (Op b : {Op::N, Op::T}) {
    auto k = testing::compile_f32(c, Op::N, b, arch);
    ASSERT_TRUE(k.ok) << c.canonical_name() << " " << to_string(b) << "\n" << k.error;
    EXPECT_EQ(k.resources.spill_store_bytes, 0) << c.canonical_name() << " " << arch;
    const std::string bytes(k.cubin.begin(), k.cubin.end());
    EXPECT_NE(bytes.find("sgemm_warp_pack_b"), std::string::npos);
  }
}

// TAIL_SPLIT: the tail tiles' arrival counters live in the module, with and without PACK_B
// (whose packed B comes first in the workspace).
TEST_P(SgemmWarpCompiles, tail_split_configs_compile_with_their_arrival_counters) {
  const std::string arch = GetParam();
  const SearchSpace space = SearchSpace::load(kSpace);
  for (int pack : {0, 1}) {
    const KernelConfig c = for_arch(warp_config({{"TAIL_SPLIT", 4}, {"PACK_B", pack}}), arch);
    EXPECT_EQ(space.rejection(c, arch_limits(arch)), std::nullopt) << c.canonical_name();
    auto k = testing::compile_f32(c, Op::N, Op::T, arch);
    ASSERT_TRUE(k.ok) << c.canonical_name() << "\n" << k.error;
    EXPECT_EQ(k.resources.spill_store_bytes, 0) << c.canonical_name() << " " << arch;
    const std::string bytes(k.cubin.begin(), k.cubin.end());
    EXPECT_NE(bytes.find("sgemm_warp_tail_arrivals"), std::string::npos) << c.canonical_name();
  }
  auto plain = testing::compile_f32(for_arch(warp_config(), arch), Op::N, Op::N, arch);
  ASSERT_TRUE(plain.ok) << plain.error;
  const std::string bytes(plain.cubin.begin(), plain.cubin.end());
  EXPECT_EQ(bytes.find("sgemm_warp_tail_arrivals"), std::string::npos) << "TAIL_SPLIT=1";
}

TEST(SgemmWarpSpace, split_k_and_tail_split_exclude_each_other) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const KernelConfig both = warp_config({{"SPLIT_K", 2}, {"TAIL_SPLIT", 2}});
  const auto why = space.rejection(both, arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cannot both cut K"), std::string::npos) << *why;
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 512, 512, 512);
  const auto host = template_named("sgemm_warp").unsupported_reason(both, p, "sm_90");
  ASSERT_TRUE(host);
  EXPECT_EQ(*host, "SPLIT_K and TAIL_SPLIT cannot both cut K");
  auto k = testing::compile_f32(both, Op::N, Op::N, "sm_90");
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.error.find("cannot both cut K"), std::string::npos) << k.error;
}

TEST_P(SgemmWarpCompiles, representative_configs_are_legal_and_compile_without_spills) {
  const std::string arch = GetParam();
  const SearchSpace space = SearchSpace::load(kSpace);
  const auto configs = representative_configs();
  for (size_t i = 0; i < configs.size(); ++i) {
    const KernelConfig c = for_arch(configs[i], arch);
    EXPECT_EQ(space.rejection(c, arch_limits(arch)), std::nullopt) << c.canonical_name();
    // The first config in every layout, the others each in one (keeps the suite short).
    for (int layout = 0; layout < 4; ++layout) {
      if (i > 0 && layout != int(i % 4)) continue;
      const Op a = layout / 2 ? Op::T : Op::N, b = layout % 2 ? Op::T : Op::N;
      const std::string what = c.canonical_name() + " " + to_string(a) + to_string(b) + " " + arch;
      auto k = testing::compile_f32(c, a, b, arch);
      ASSERT_TRUE(k.ok) << what << "\n" << k.error;
      ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
      EXPECT_LE(k.resources.registers, 255) << what;
      EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
      EXPECT_EQ(resource_violation(k, testing::block_of(c), arch_limits(arch)), std::nullopt)
          << what;
    }
  }
}

// A seeded sample of the legal space: whatever the space calls legal must compile.
TEST_P(SgemmWarpCompiles, sample_of_legal_space_compiles) {
  const std::string arch = GetParam();
  auto legal = SearchSpace::load(kSpace).enumerate(arch_limits(arch)).legal;
  ASSERT_GT(legal.size(), 100u);
  std::mt19937_64 rng(arch_number(arch) + 9);
  std::shuffle(legal.begin(), legal.end(), rng);
  for (size_t i = 0; i < 3; ++i) {
    const Op a = i % 2 ? Op::T : Op::N, b = i / 2 % 2 ? Op::T : Op::N;
    auto k = testing::compile_f32(legal[i], a, b, arch);
    EXPECT_TRUE(k.ok) << legal[i].canonical_name() << "\n" << k.error;
    EXPECT_TRUE(k.resources.found) << k.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, SgemmWarpCompiles, ::testing::Values("sm_75", "sm_80", "sm_90"));

TEST(SgemmWarpSpace, refuses_cp_async_stages_on_sm_75_with_its_reason) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const auto why = space.rejection(warp_config({{"STAGES", 3}}), arch_limits("sm_75"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("sm_75 has no cp.async"), std::string::npos) << *why;
  EXPECT_EQ(space.rejection(warp_config({{"STAGES", 3}}), arch_limits("sm_80")), std::nullopt);
  EXPECT_EQ(space.rejection(warp_config({{"STAGES", 2}}), arch_limits("sm_75")), std::nullopt);
}

TEST(SgemmWarpSpace, stages_3_on_sm_75_fails_to_compile_with_the_same_reason) {
  auto k = testing::compile_f32(warp_config({{"STAGES", 3}}), Op::N, Op::N, "sm_75");
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.error.find("sm_75 has no cp.async"), std::string::npos) << k.error;
}

// The fragment double buffer alternates across slices, so an odd BK would read the wrong one.
TEST(SgemmWarpSpace, refuses_odd_bk_in_the_space_and_the_template) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const auto why = space.rejection(warp_config({{"BK", 9}}), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("BK must be even"), std::string::npos) << *why;
  auto k = testing::compile_f32(warp_config({{"BK", 9}}), Op::N, Op::N, "sm_90");
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.error.find("BK must be even"), std::string::npos) << k.error;
}

// Enumerated in a few seconds and ranked by the model in a few more (TAIL_SPLIT took sm_90 from
// 46080 to 73728 legal points).
TEST(SgemmWarpSpace, legal_set_is_tens_of_thousands_at_most) {
  const SearchSpace space = SearchSpace::load(kSpace);
  for (const char* arch : {"sm_75", "sm_90"}) {
    const size_t legal = space.enumerate(arch_limits(arch)).legal.size();
    EXPECT_GT(legal, 500u) << arch;
    EXPECT_LT(legal, 100000u) << arch;
  }
}

Problem aligned(Op a, Op b, int align_a, int align_b) {
  Problem p = Problem::packed(GemmTypes{}, a, b, 1023, 1023, 1023);
  p.align_a = align_a;
  p.align_b = align_b;
  return p;
}

// Only A in T layout and B in N layout are copied VEC floats at a time.
TEST(SgemmWarpHost, asks_vec_alignment_only_of_the_operands_it_copies_as_vectors) {
  const GemmTemplate& family = template_named("sgemm_warp");
  const KernelConfig vec4 = warp_config();
  EXPECT_EQ(family.unsupported_reason(vec4, aligned(Op::N, Op::T, 4, 4), "sm_90"), std::nullopt);
  auto why = family.unsupported_reason(vec4, aligned(Op::T, Op::T, 8, 4), "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("VEC=4 needs A"), std::string::npos) << *why;
  why = family.unsupported_reason(vec4, aligned(Op::N, Op::N, 16, 8), "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("VEC=4 needs B"), std::string::npos) << *why;
  const KernelConfig vec2 = warp_config({{"VEC", 2}});
  EXPECT_EQ(family.unsupported_reason(vec2, aligned(Op::T, Op::N, 8, 8), "sm_90"), std::nullopt);
  EXPECT_TRUE(family.unsupported_reason(vec2, aligned(Op::T, Op::N, 4, 8), "sm_90"));
  EXPECT_EQ(
      family.unsupported_reason(warp_config({{"VEC", 1}}), aligned(Op::T, Op::N, 4, 4), "sm_90"),
      std::nullopt);
}

// PACK_B packs only a B the main loop cannot read VEC-wide (T layout or misaligned), and then
// needs no alignment of B beyond a float; the plan runs the pack first with B's bytes.
TEST(SgemmWarpHost, pack_b_serves_a_k_contiguous_or_misaligned_b_and_plans_its_workspace) {
  const GemmTemplate& family = template_named("sgemm_warp");
  const KernelConfig pack = warp_config({{"PACK_B", 1}});
  auto why = family.unsupported_reason(pack, aligned(Op::N, Op::N, 16, 16), "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("read as it is (PACK_B=0)"), std::string::npos) << *why;
  EXPECT_EQ(family.unsupported_reason(pack, aligned(Op::N, Op::T, 4, 16), "sm_90"), std::nullopt);
  EXPECT_EQ(family.unsupported_reason(pack, aligned(Op::N, Op::N, 4, 4), "sm_90"), std::nullopt);
  EXPECT_TRUE(family.unsupported_reason(warp_config(), aligned(Op::N, Op::N, 4, 4), "sm_90"))
      << "unpacked VEC=4 still needs an aligned B";

  const Problem nt = Problem::packed(GemmTypes{}, Op::N, Op::T, 1000, 300, 4097);
  const LaunchPlan plan = family.plan_launch(pack, nt);
  ASSERT_EQ(plan.count, 2);
  EXPECT_EQ(family.entries(pack)[size_t(plan.launches[0].entry)], "sgemm_warp_pack_b");
  EXPECT_EQ(plan.launches[0].block[0], 32u) << "transposing pack: 32 x 8 threads";
  EXPECT_EQ(plan.launches[0].block[1], 8u);
  EXPECT_EQ(plan.launches[1].entry, 0);
  // K rounded up to BK = 8 (4104), N to BN = 128 (384), floats, rounded up to 256 bytes.
  EXPECT_EQ(plan.workspace_bytes, size_t(4104) * 384 * 4);
  const LaunchPlan plain = family.plan_launch(warp_config(), nt);
  EXPECT_EQ(plain.workspace_bytes, 0u);
  EXPECT_EQ(family.entries(warp_config()).size(), 2u);
}

// TAIL_SPLIT: one 1-D grid of every tile, plus the last partial wave's tiles once more per extra
// K slice; their partial tiles after the packed B in the workspace, and per-call counters.
TEST(SgemmWarpHost, tail_split_plans_the_partial_wave_as_k_slices) {
  const GemmTemplate& family = template_named("sgemm_warp");
  const KernelConfig c = warp_config({{"BM", 64},
                                      {"BN", 128},
                                      {"WM", 64},
                                      {"WN", 32},
                                      {"TM", 16},
                                      {"TN", 4},
                                      {"VEC", 1},
                                      {"MIN_BLOCKS", 2},
                                      {"TAIL_SPLIT", 8}});
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 4097, 4097, 4097);
  // 65 x 33 = 2145 tiles over 132 SMs x 2 blocks: 8 waves of 264 and a tail of 33.
  const LaunchPlan plan = family.plan_launch(c, p, 132);
  ASSERT_EQ(plan.count, 1);
  EXPECT_EQ(plan.launches[0].grid[0], 2145u + 33u * 7);
  EXPECT_EQ(plan.launches[0].grid[1], 1u);
  EXPECT_EQ(plan.launches[0].grid[2], 1u);
  EXPECT_EQ(plan.workspace_bytes, size_t(33) * 8 * 64 * 128 * 4);
  EXPECT_TRUE(plan.module_state);

  // No GPU known: every tile whole, in the same 1-D grid, and nothing shared between calls.
  const LaunchPlan blind = family.plan_launch(c, p, 0);
  EXPECT_EQ(blind.launches[0].grid[0], 2145u);
  EXPECT_EQ(blind.workspace_bytes, 0u);
  EXPECT_FALSE(blind.module_state);
  // Tiles that fill whole waves (24 x 11 = 264) have no tail.
  const LaunchPlan full = family.plan_launch(
      c, Problem::packed(GemmTypes{}, Op::N, Op::N, 64 * 24, 128 * 11, 512), 132);
  EXPECT_EQ(full.launches[0].grid[0], 264u);
  EXPECT_EQ(full.workspace_bytes, 0u);

  // With PACK_B the packed B comes first: K rounded to BK = 8, N to BN = 128.
  KernelConfig packed = c;
  packed.set("PACK_B", 1);
  const Problem nt = Problem::packed(GemmTypes{}, Op::N, Op::T, 4097, 4097, 4097);
  const LaunchPlan both = family.plan_launch(packed, nt, 132);
  ASSERT_EQ(both.count, 2);
  EXPECT_EQ(both.workspace_bytes, size_t(4104) * 4224 * 4 + size_t(33) * 8 * 64 * 128 * 4);
  EXPECT_EQ(both.launches[1].grid[0], 2145u + 33u * 7);
}

// PACK_B's own refusals: a B not even float-aligned, and a packed copy over the workspace cap.
TEST(SgemmWarpHost, pack_b_refuses_an_unaligned_b_and_a_copy_over_the_workspace_cap) {
  const GemmTemplate& family = template_named("sgemm_warp");
  const KernelConfig pack = warp_config({{"PACK_B", 1}});
  auto why = family.unsupported_reason(pack, aligned(Op::N, Op::T, 4, 2), "sm_90");
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "PACK_B=1 needs B aligned to 4 bytes (have 2)");
  const Problem huge = Problem::packed(GemmTypes{}, Op::N, Op::T, 64, 8192, 65536);  // 2 GiB
  why = family.unsupported_reason(pack, huge, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "PACK_B=1 needs 2048 MiB of workspace for the packed B of 65536x8192 (at most "
            "1024 MiB)");
}

// The dispatcher's `*` default lines reach sm_75 through this check alone (no space there).
TEST(SgemmWarpHost, refuses_cp_async_stages_on_sm_75_for_the_dispatcher) {
  const GemmTemplate& family = template_named("sgemm_warp");
  const auto why = family.unsupported_reason(warp_config({{"STAGES", 3}}),
                                             aligned(Op::N, Op::N, 16, 16), "sm_75");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("STAGES=3 needs cp.async"), std::string::npos) << *why;
  EXPECT_EQ(family.unsupported_reason(warp_config({{"STAGES", 3}}), aligned(Op::N, Op::N, 16, 16),
                                      "sm_80"),
            std::nullopt);
}

TEST(SgemmWarpHost, split_k_launches_the_beta_pass_first_and_sizes_the_grid) {
  const GemmTemplate& family = template_named("sgemm_warp");
  const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 1000, 300, 4096);
  const LaunchPlan plain = family.plan_launch(warp_config(), p);
  ASSERT_EQ(plain.count, 1);
  EXPECT_EQ(plain.launches[0].grid[0], 3u);  // ceil(300 / 128)
  EXPECT_EQ(plain.launches[0].grid[1], 4u);  // ceil(1000 / 256)
  EXPECT_EQ(plain.launches[0].block[0], 256u);
  // Both operands' shared rows are padded by 4 floats (conflict-free transposing stores).
  EXPECT_EQ(plain.launches[0].smem_bytes, 3u * 8 * (256 + 4 + 128 + 4) * 4);
  const LaunchPlan split = family.plan_launch(warp_config({{"SPLIT_K", 4}}), p);
  ASSERT_EQ(split.count, 2);
  EXPECT_EQ(split.launches[0].entry, 1);  // sgemm_warp_prepare_c
  EXPECT_EQ(split.launches[1].grid[2], 4u);
}

}  // namespace
}  // namespace tgemm
