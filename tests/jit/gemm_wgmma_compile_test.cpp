// gemm_wgmma without a GPU: every legal config of its space compiles for sm_90 (as sm_90a,
// stored as sm_90's) without spills in every type and layout; the PTX holds wgmma.mma_async;
// the space and the host side refuse other archs, other types and misaligned operands with a
// reason; the tf32 plan packs A and B first, and so does 16-bit PACK=1 (any alignment), in the
// caller's layout; f32 types refuse PACK=1 (PACK=0 packs them); tf32 PACK=2 reads K-major
// operands in place and packs only MN-major ones, clean in every legal config; SPLIT_K > 1 (f32 C
// only) adds into C with f32 atomics over grid z, after a C = beta * C launch.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <utility>

#include "src/core/error.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/hopper_builds.h"
#include "tests/common/template_ptx.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const char* kSpace = TGEMM_SOURCE_DIR "/configs/spaces/gemm_wgmma.yaml";

const GemmTemplate& wgmma() { return template_named("gemm_wgmma"); }

KernelConfig wgmma_config(int64_t bm, int64_t bn, int64_t wgs, int64_t stages, int64_t swizzle,
                          int64_t pack = 0, int64_t split_k = 1) {
  return {"gemm_wgmma",
          {{"BM", bm},
           {"BN", bn},
           {"WGS", wgs},
           {"STAGES", stages},
           {"SWIZZLE", swizzle},
           {"PACK", pack},
           {"SPLIT_K", split_k}}};
}

// A problem whose operands are one 16-bit element off a 16-byte boundary.
Problem misaligned(const char* types, Op a, Op b, int64_t m, int64_t n, int64_t k) {
  Problem p = Problem::packed(parse_gemm_types(types), a, b, m, n, k);
  p.align_a = p.align_b = element_bytes(p.types.a);
  return p;
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

using Case = testing::HopperCase;

std::vector<std::string> unclean_builds(const std::vector<Case>& cases) {
  return testing::unclean_hopper_builds(wgmma(), cases);
}

// One build per config up to what changes no resource: SWIZZLE (the block order) and SPLIT_K
// (only the epilogue's stores, built in its own test below).
std::string build_key(KernelConfig c) {
  c.set("SWIZZLE", 1);
  c.set("SPLIT_K", 1);
  return c.canonical_name();
}

TEST(GemmWgmmaCompile, every_legal_config_builds_for_sm_90_without_spills) {
  const auto legal = SearchSpace::load(kSpace).enumerate(arch_limits("sm_90")).legal;
  ASSERT_GT(legal.size(), 10u);
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const KernelConfig& c : legal) {
    // Three stages are for f32x3 (which copies two ahead); some 16-bit builds of them
    // serialize their wgmmas and are pruned (the test below), so they need not build clean.
    // PACK=2 is tf32's (its own test below).
    if (c.get("STAGES") == 3 || c.get("PACK") == 2 || !seen.insert(build_key(c)).second) continue;
    // The MN-major 16-bit path (NN: B by its transpose bit) and the K-major one (TN's A is
    // MN-major, B K-major in NT): the copies differ, so do the registers. PACK=1's unbounded
    // copies too, in the other two layouts.
    const bool pack = c.get("PACK") == 1;
    cases.push_back({c, gemm_types("f16"), pack ? Op::T : Op::N, Op::N});
    cases.push_back({c, gemm_types("bf16", "f32"), pack ? Op::N : Op::T, Op::T});
  }
  ASSERT_TRUE(seen.count(wgmma_config(64, 64, 1, 5, 1, 1).canonical_name()));
  EXPECT_LE(cases.size(), 80u) << "the case list grew: keep the build time bounded";
  const auto problems = unclean_builds(cases);
  std::string names;
  for (const std::string& p : problems) names += p.substr(0, p.find(':')) + "\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean:\n"
                                << names << "first: " << problems.front();
}

// ptxas serializes the wgmmas of a three-stage 128x256 f16 build (C7515); the tuner's resource
// check prunes it rather than measure a kernel whose tensor cores run one wgmma at a time.
TEST(GemmWgmmaCompile, a_build_with_serialized_wgmmas_is_pruned) {
  const KernelConfig c = wgmma_config(128, 256, 2, 3, 8);
  const CompiledKernel k =
      build_kernel(wgmma(), c, Problem::packed(gemm_types("f16"), Op::N, Op::N, 1, 1, 1), "sm_90");
  ASSERT_TRUE(k.ok) << k.error;
  ASSERT_TRUE(k.resources.wgmma_serialized) << k.log;
  const auto why = resource_violation(k, wgmma().block_resources(c), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "serializes")) << *why;
}

TEST(GemmWgmmaCompile, the_default_builds_in_every_type_and_layout) {
  std::vector<Case> cases;
  for (const char* types : {"f16", "f16_out_f32", "bf16", "bf16_out_f32", "tf32"})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        cases.push_back({wgmma_config(128, 256, 2, 4, 8), parse_gemm_types(types), a, b});
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << problems.front();
}

TEST(GemmWgmmaCompile, pack_1_builds_for_f16_and_bf16_in_every_layout_without_spills) {
  std::vector<Case> cases;
  for (const char* types : {"f16", "bf16_out_f32"})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        cases.push_back({wgmma_config(128, 256, 2, 4, 8, 1), parse_gemm_types(types), a, b});
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << problems.front();
}

// The PTX NVRTC makes of the template for `types` in layout a, b on compute_90a.
std::string ptx_of(const KernelConfig& config, const GemmTypes& types, Op a, Op b) {
  return testing::template_ptx(wgmma(), config, Problem::packed(types, a, b, 1, 1, 1),
                               "compute_90a");
}

TEST(GemmWgmmaPtx, holds_wgmma_with_transpose_bits_and_the_tf32_form) {
  const std::string nn = ptx_of(wgmma_config(128, 256, 2, 4, 8), gemm_types("f16"), Op::N, Op::N);
  EXPECT_TRUE(contains(nn, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16")) << nn.size();
  EXPECT_TRUE(contains(nn, "p, 1, 1, 0, 1;")) << "A K-major, B N-major";
  EXPECT_TRUE(contains(nn, "wgmma.fence.sync.aligned"));
  EXPECT_TRUE(contains(nn, "wgmma.commit_group.sync.aligned"));
  EXPECT_TRUE(contains(nn, "wgmma.wait_group.sync.aligned 1"));
  EXPECT_TRUE(contains(nn, "fence.proxy.async.shared::cta"));
  EXPECT_TRUE(contains(nn, "cp.async.cg.shared.global"));
  EXPECT_FALSE(contains(nn, "mma.sync"));
  const std::string tn = ptx_of(wgmma_config(128, 128, 1, 4, 8), gemm_types("bf16"), Op::T, Op::T);
  EXPECT_TRUE(contains(tn, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"));
  EXPECT_TRUE(contains(tn, "p, 1, 1, 1, 0;")) << "A M-major, B K-major";
  const std::string tf32 =
      ptx_of(wgmma_config(128, 128, 2, 4, 8), gemm_types("tf32"), Op::N, Op::N);
  EXPECT_TRUE(contains(tf32, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"));
  EXPECT_TRUE(contains(tf32, "cvt.rna.tf32.f32")) << "the pack rounds";
}

// PACK=1's main loop reads whole padded tiles: its copies take no zero-fill size operand.
TEST(GemmWgmmaPtx, pack_1_copies_the_packed_tiles_without_bounds) {
  auto copies = [](const std::string& ptx, bool sized) {
    size_t n = 0;
    const std::string op = "cp.async.cg.shared.global";
    for (size_t at = ptx.find(op); at != std::string::npos; at = ptx.find(op, at + 1)) {
      const std::string line = ptx.substr(at, ptx.find('\n', at) - at);
      n += (std::count(line.begin(), line.end(), ',') == 3) == sized;
    }
    return n;
  };
  const KernelConfig c = wgmma_config(128, 128, 2, 4, 8);
  KernelConfig pack = c;
  pack.set("PACK", 1);
  const std::string bounded = ptx_of(c, gemm_types("f16"), Op::T, Op::N);
  const std::string packed = ptx_of(pack, gemm_types("f16"), Op::T, Op::N);
  EXPECT_GT(copies(bounded, true), 0u);
  EXPECT_EQ(copies(bounded, false), 0u);
  EXPECT_EQ(copies(packed, true), 0u) << "a zero-filling copy in the PACK=1 loop";
  EXPECT_GT(copies(packed, false), 0u);
  EXPECT_TRUE(contains(packed, "p, 1, 1, 1, 1;")) << "A and B MN-major, read as stored";
}

TEST(GemmWgmmaSpace, refuses_sm_75_and_sm_80_with_a_readable_reason) {
  const SearchSpace space = SearchSpace::load(kSpace);
  for (const char* arch : {"sm_75", "sm_80"}) {
    SCOPED_TRACE(arch);
    for (const char* type : {"f16", "bf16", "tf32"}) {
      const auto by_family = wgmma().types_unsupported(parse_gemm_types(type), arch);
      ASSERT_TRUE(by_family);
      EXPECT_TRUE(contains(*by_family, "sm_90a")) << *by_family;
    }
    const auto why = space.rejection(wgmma_config(128, 256, 2, 4, 8), arch_limits(arch));
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "wgmma")) << *why;
    try {
      space.enumerate(arch_limits(arch));
      ADD_FAILURE() << "a legal config on " << arch;
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "sm_90a only")) << e.what();
    }
  }
  EXPECT_FALSE(space.rejection(wgmma_config(128, 256, 2, 4, 8), arch_limits("sm_90")));
  for (const char* type : {"f16", "f16_out_f32", "bf16", "bf16_out_f32", "tf32"})
    EXPECT_FALSE(wgmma().types_unsupported(parse_gemm_types(type), "sm_90")) << type;
}

TEST(GemmWgmmaSpace, refuses_over_128_accumulators_and_too_much_shared_memory) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const auto acc = space.rejection(wgmma_config(256, 256, 2, 3, 8), arch_limits("sm_90"));
  ASSERT_TRUE(acc);
  EXPECT_TRUE(contains(*acc, "accumulators")) << *acc;
  const auto smem = space.rejection(wgmma_config(128, 256, 2, 5, 8), arch_limits("sm_90"));
  ASSERT_TRUE(smem);
  EXPECT_TRUE(contains(*smem, "shared memory")) << *smem;
}

TEST(GemmWgmmaHost, refuses_ffma_f32_and_misaligned_16_bit_operands) {
  const auto ffma = wgmma().types_unsupported(parse_gemm_types("f32"), "sm_90");
  ASSERT_TRUE(ffma);
  EXPECT_TRUE(contains(*ffma, "tf32, f32x3, not f32")) << *ffma;
  EXPECT_FALSE(wgmma().types_unsupported(parse_gemm_types("f32x3"), "sm_90"));
  EXPECT_TRUE(wgmma().types_unsupported(parse_gemm_types("f32x3"), "sm_80"));
  EXPECT_FALSE(SearchSpace::load(kSpace).types_unsupported(parse_gemm_types("f32x3"), "sm_90"));
  const KernelConfig c = wgmma_config(128, 256, 2, 4, 8);
  Problem p = Problem::packed(gemm_types("f16"), Op::N, Op::N, 4096, 4096, 4096);
  EXPECT_FALSE(wgmma().unsupported_reason(c, p, "sm_90"));
  p.align_b = 8;
  const auto why = wgmma().unsupported_reason(c, p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "16-byte")) << *why;
  Problem tf32 = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 4096, 4096, 4096);
  tf32.align_a = 4;  // the pack reads any f32-aligned operand
  EXPECT_FALSE(wgmma().unsupported_reason(c, tf32, "sm_90"));
  tf32.align_a = 2;
  const auto half = wgmma().unsupported_reason(c, tf32, "sm_90");
  ASSERT_TRUE(half);
  EXPECT_TRUE(contains(*half, "4-byte aligned")) << *half;
  EXPECT_TRUE(contains(*half, "have 2 and")) << *half;
}

TEST(GemmWgmmaHost, plans_one_launch_for_16_bit_and_the_two_packs_first_for_tf32) {
  const KernelConfig c = wgmma_config(128, 256, 2, 4, 8);
  const Problem f16 = Problem::packed(gemm_types("f16"), Op::N, Op::T, 1000, 1000, 520);
  const LaunchPlan one = wgmma().plan_launch(c, f16);
  ASSERT_EQ(one.count, 1);
  EXPECT_EQ(one.workspace_bytes, 0u);
  EXPECT_EQ(one.launches[0].entry, 0);
  EXPECT_EQ(one.launches[0].block[0], 256u);
  EXPECT_EQ(one.launches[0].grid[0], 4u);  // 1000 / 256, rounded up
  EXPECT_EQ(one.launches[0].grid[1], 8u);  // 1000 / 128
  EXPECT_EQ(one.launches[0].smem_bytes, size_t(4 * (128 + 256) * 128 + 1024));
  EXPECT_EQ(wgmma().block_resources(c).dynamic_smem_bytes, one.launches[0].smem_bytes);

  // tf32 NN: A is K-major already (a plain copy), B is transposed (32 x 8 thread tiles).
  const Problem tf32 = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 1000, 1000, 520);
  const LaunchPlan three = wgmma().plan_launch(c, tf32);
  ASSERT_EQ(three.count, 3);
  EXPECT_EQ(three.launches[0].entry, 1);
  EXPECT_EQ(three.launches[0].block[0], 256u);
  EXPECT_EQ(three.launches[1].entry, 2);
  EXPECT_EQ(three.launches[1].block[0], 32u);
  EXPECT_EQ(three.launches[1].block[1], 8u);
  EXPECT_EQ(three.launches[2].entry, 0);
  // A: 1024 x 544 f32 (whole 128 x 32 tiles), B: 1024 x 544 (256 x 32 tiles).
  EXPECT_EQ(three.workspace_bytes, size_t(2 * 1024 * 544 * 4));
  const std::vector<std::string> entries = wgmma().entries(c);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[1], "gemm_wgmma_pack_a");
  EXPECT_EQ(wgmma().describe(c, tf32).tile.k, 64);
}

// PACK=1 reads any element-aligned 16-bit A and B (the packs take them); PACK=0 still needs
// 16 bytes; f32 types always pack, so PACK=1 would measure their one kernel twice.
TEST(GemmWgmmaHost, pack_1_takes_misaligned_16_bit_operands_and_refuses_f32_types) {
  const KernelConfig plain = wgmma_config(128, 256, 2, 4, 8),
                     pack = wgmma_config(128, 256, 2, 4, 8, 1);
  for (const char* types : {"f16", "bf16", "f16_out_f32", "bf16_out_f32"}) {
    SCOPED_TRACE(types);
    const Problem p = misaligned(types, Op::N, Op::T, 4097, 4097, 4097);
    EXPECT_EQ(wgmma().unsupported_reason(pack, p, "sm_90"), std::nullopt);
    const auto why = wgmma().unsupported_reason(plain, p, "sm_90");
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "16-byte")) << *why;
    EXPECT_TRUE(contains(*why, "PACK=1")) << *why;
    EXPECT_EQ(wgmma().unsupported_reason(
                  pack, Problem::packed(parse_gemm_types(types), Op::T, Op::N, 4096, 4096, 4096),
                  "sm_90"),
              std::nullopt);
  }
  for (const char* types : {"tf32", "f32x3"}) {
    SCOPED_TRACE(types);
    const auto why = wgmma().unsupported_reason(
        wgmma_config(64, 64, 1, 5, 1, 1),
        Problem::packed(parse_gemm_types(types), Op::N, Op::N, 4096, 4096, 4096), "sm_90");
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "packs f32 operands with PACK=0")) << *why;
    EXPECT_TRUE(contains(*why, "PACK=1 is for f16 and bf16")) << *why;
  }
  const auto bad = wgmma().unsupported_reason(wgmma_config(128, 256, 2, 4, 8, 3),
                                              misaligned("f16", Op::N, Op::N, 64, 64, 64), "sm_90");
  ASSERT_TRUE(bad);
  EXPECT_TRUE(contains(*bad, "PACK=3 is not 0, 1 or 2")) << *bad;
}

TEST(GemmWgmmaHost, pack_1_refuses_a_workspace_over_the_cap_naming_the_numbers) {
  // 2^16 x 2^16 x 2^13 f16: A 1 GiB and B 1 GiB packed, over the 1 GiB cap.
  const Problem p = misaligned("f16", Op::N, Op::N, 65536, 65536, 8192);
  const auto why = wgmma().unsupported_reason(wgmma_config(128, 256, 2, 4, 8, 1), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "2048 MiB")) << *why;
  EXPECT_TRUE(contains(*why, "65536x65536x8192")) << *why;
  EXPECT_TRUE(contains(*why, "at most 1024 MiB")) << *why;
}

// 16-bit PACK=1 copies A and B as stored (plain 256-thread copies, no transpose), padded to
// whole tiles: K-major [rows][k] to BM or BN x 64, MN-major [k][rows] to 64 x BM or BN.
TEST(GemmWgmmaHost, plans_pack_1_as_two_plain_copies_in_the_callers_layout) {
  const KernelConfig c = wgmma_config(128, 256, 2, 4, 8, 1);
  const Problem nt = misaligned("f16", Op::N, Op::T, 1000, 1000, 520);
  const LaunchPlan plan = wgmma().plan_launch(c, nt);
  ASSERT_EQ(plan.count, 3);
  EXPECT_EQ(plan.launches[0].entry, 1);
  EXPECT_EQ(plan.launches[1].entry, 2);
  for (int i : {0, 1}) {
    EXPECT_EQ(plan.launches[i].block[0], 256u) << i;
    EXPECT_EQ(plan.launches[i].block[1], 1u) << i;
    EXPECT_EQ(plan.launches[i].grid[2], 1u) << i;
  }
  // A [1024][576] (128 x 64 tiles), B [1024][576] (256 x 64 tiles), 2 bytes each.
  EXPECT_EQ(plan.workspace_bytes, size_t(2 * 1024 * 576 * 2));
  EXPECT_EQ(plan.launches[0].grid[0], unsigned(1024 * 576 * 2 / 16 / 256));
  EXPECT_EQ(plan.launches[2].entry, 0);
  EXPECT_EQ(plan.launches[2].grid[0], 4u);
  EXPECT_EQ(plan.launches[2].grid[1], 8u);
  EXPECT_EQ(plan.launches[2].smem_bytes, size_t(4 * (128 + 256) * 128 + 1024));
  // TN: A stored [k][m] -> [576][1024], B stored [k][n] -> [576][1024].
  const Problem tn = misaligned("bf16", Op::T, Op::N, 1000, 1000, 520);
  const LaunchPlan t = wgmma().plan_launch(c, tn);
  ASSERT_EQ(t.count, 3);
  EXPECT_EQ(t.launches[0].block[0], 256u);
  EXPECT_EQ(t.launches[1].block[0], 256u);
  EXPECT_EQ(t.workspace_bytes, size_t(2 * 576 * 1024 * 2));
  // 127 x 257 x 509 NN: A [128][512], B [512][512] (64 x 256 tiles).
  const LaunchPlan odd = wgmma().plan_launch(c, misaligned("f16", Op::N, Op::N, 127, 257, 509));
  EXPECT_EQ(odd.workspace_bytes, size_t((128 * 512 + 512 * 512) * 2));
  // PACK=0 on the same (aligned) shapes: one launch, no workspace.
  const LaunchPlan plain =
      wgmma().plan_launch(wgmma_config(128, 256, 2, 4, 8),
                          Problem::packed(gemm_types("f16"), Op::N, Op::T, 1000, 1000, 520));
  EXPECT_EQ(plain.count, 1);
  EXPECT_EQ(plain.workspace_bytes, 0u);
}

// f32x3: a second accumulator set and two planes per stage; the space allows what fits one.
TEST(GemmWgmmaHost, refuses_f32x3_configs_over_64_accumulators_or_with_two_planes_too_big) {
  const Problem p = Problem::packed(gemm_types("f32x3"), Op::N, Op::N, 4096, 4096, 4096);
  const auto acc = wgmma().unsupported_reason(wgmma_config(128, 256, 2, 4, 8), p, "sm_90");
  ASSERT_TRUE(acc);
  EXPECT_TRUE(contains(*acc, "accumulator")) << *acc;
  EXPECT_TRUE(wgmma().unsupported_reason(wgmma_config(128, 128, 1, 3, 8), p, "sm_90"));
  // 128 x 128, 4 stages: 2 * 4 * 256 rows of 128 bytes + 1 KiB, over sm_90's 227 KiB.
  const auto smem = wgmma().unsupported_reason(wgmma_config(128, 128, 2, 4, 8), p, "sm_90");
  ASSERT_TRUE(smem);
  EXPECT_TRUE(contains(*smem, "shared memory")) << *smem;
  EXPECT_TRUE(contains(*smem, "263168")) << *smem;
  EXPECT_FALSE(wgmma().unsupported_reason(wgmma_config(128, 128, 2, 3, 8), p, "sm_90"));
  EXPECT_FALSE(wgmma().unsupported_reason(wgmma_config(64, 64, 1, 5, 1), p, "sm_90"));
  // The same configs compute tf32.
  const Problem tf32 = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 4096, 4096, 4096);
  EXPECT_FALSE(wgmma().unsupported_reason(wgmma_config(128, 256, 2, 4, 8), tf32, "sm_90"));
  EXPECT_FALSE(wgmma().unsupported_reason(wgmma_config(128, 128, 2, 4, 8), tf32, "sm_90"));
}

TEST(GemmWgmmaHost, plans_f32x3_packs_of_two_planes_and_twice_the_stage_bytes) {
  const KernelConfig c = wgmma_config(128, 128, 2, 3, 8);
  const Problem p = Problem::packed(gemm_types("f32x3"), Op::T, Op::N, 1000, 1000, 520);
  const LaunchPlan plan = wgmma().plan_launch(c, p);
  ASSERT_EQ(plan.count, 3);
  EXPECT_EQ(plan.launches[0].entry, 1);
  EXPECT_EQ(plan.launches[0].block[0], 32u);  // A stored [k][m]: transposed
  EXPECT_EQ(plan.launches[0].grid[2], 2u);    // z 0 the big plane, z 1 the small
  EXPECT_EQ(plan.launches[1].entry, 2);
  EXPECT_EQ(plan.launches[1].grid[2], 2u);
  // A and B: 1024 x 544 f32 each (whole 128 x 32 tiles), two planes of each.
  EXPECT_EQ(plan.workspace_bytes, size_t(2 * 2 * 1024 * 544 * 4));
  const size_t two_planes = size_t(2 * 3 * (128 + 128) * 128 + 1024);
  EXPECT_EQ(plan.launches[2].entry, 0);
  EXPECT_EQ(plan.launches[2].smem_bytes, two_planes);
  EXPECT_EQ(plan.launches[2].grid[2], 1u);
  // The kernel opts in to what the variant's plan asks (main_smem_opt_in): two planes for
  // f32x3, while the config alone (block_resources, the static checks) counts one.
  EXPECT_EQ(main_smem_opt_in(wgmma(), c, p), two_planes);
  EXPECT_EQ(wgmma().block_resources(c).dynamic_smem_bytes, two_planes / 2 + 512);
  const LaunchPlan tf32 =
      wgmma().plan_launch(c, Problem::packed(gemm_types("tf32"), Op::T, Op::N, 1000, 1000, 520));
  EXPECT_EQ(tf32.launches[0].grid[2], 1u);
  EXPECT_EQ(tf32.workspace_bytes, plan.workspace_bytes / 2);
  EXPECT_EQ(tf32.launches[2].smem_bytes, two_planes / 2 + 512);
}

// Every legal config of the space that f32x3 accepts, in the four layouts across them.
TEST(GemmWgmmaCompile, f32x3_builds_for_sm_90_without_spills_or_serialized_wgmmas) {
  const auto legal = SearchSpace::load(kSpace).enumerate(arch_limits("sm_90")).legal;
  const GemmTypes types = gemm_types("f32x3");
  const Problem probe = Problem::packed(types, Op::N, Op::N, 64, 64, 64);
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const KernelConfig& c : legal) {
    if (wgmma().unsupported_reason(c, probe, "sm_90") || !seen.insert(build_key(c)).second)
      continue;
    const size_t i = cases.size();
    cases.push_back({c, types, i % 2 ? Op::T : Op::N, (i / 2) % 2 ? Op::T : Op::N});
  }
  ASSERT_GE(cases.size(), 4u);
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) cases.push_back({wgmma_config(128, 128, 2, 3, 8), types, a, b});
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << problems.front();
}

TEST(GemmWgmmaPtx, f32x3_splits_in_the_pack_and_sums_three_tf32_wgmmas_per_k_step) {
  const KernelConfig c = wgmma_config(128, 128, 2, 3, 8);
  const std::string x3 = ptx_of(c, gemm_types("f32x3"), Op::N, Op::T);
  const std::string tf32 = ptx_of(c, gemm_types("tf32"), Op::N, Op::T);
  const std::string wg = "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32";
  auto count = [](const std::string& text, const std::string& word) {
    size_t n = 0;
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(tf32, wg), 4u) << "one per k8 step of a 32-deep slice";
  EXPECT_EQ(count(x3, wg), 12u) << "small*big, big*small and big*big per k-step";
  EXPECT_GE(count(x3, "cvt.rna.tf32.f32"), 2 * count(tf32, "cvt.rna.tf32.f32"))
      << "big = tf32(x), small = tf32(x - big)";
  EXPECT_TRUE(contains(x3, "sub.f32") || contains(x3, "sub.rn.f32")) << "x - big";
  EXPECT_FALSE(contains(tf32, "sub.f32") || contains(tf32, "sub.rn.f32"));
  EXPECT_TRUE(contains(x3, "wgmma.wait_group.sync.aligned 0"));
  EXPECT_TRUE(contains(x3, "%ctaid.z")) << "the pack's plane";
  EXPECT_FALSE(contains(x3, "mma.sync"));
}

TEST(GemmWgmmaHost, builds_as_sm_90a_and_keys_the_cache_apart_from_a_plain_sm_90_build) {
  EXPECT_EQ(wgmma().nvrtc_arch("sm_90"), "sm_90a");
  EXPECT_EQ(template_named("gemm_mma").nvrtc_arch("sm_90"), "sm_90");
  const KernelConfig c = wgmma_config(128, 256, 2, 4, 8);
  const Problem v = Problem::packed(gemm_types("f16"), Op::N, Op::N, 1, 1, 1);
  EXPECT_EQ(kernel_cache_key(wgmma(), c, v, "sm_90"),
            NvrtcCompiler::cache_key(wgmma().source(), wgmma().defines(c, v), "sm_90a"));
  EXPECT_NE(kernel_cache_key(wgmma(), c, v, "sm_90"),
            NvrtcCompiler::cache_key(wgmma().source(), wgmma().defines(c, v), "sm_90"));
  EXPECT_NO_THROW(NvrtcCompiler::options({}, "sm_90a"));
  for (const char* bad : {"sm_9xa", "gfx90a"}) {
    try {
      NvrtcCompiler::options({}, bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), std::string("'") + bad + "'")) << e.what();
    }
  }
}

// Split-K's epilogue adds into C with atomics: the f32-C types build clean with it in the four
// layouts, on the smallest tile (64 slices), f32x3's largest (two accumulator sets) and a
// one-warpgroup 128x64; and 16-bit PACK=1 split.
TEST(GemmWgmmaCompile, split_k_builds_for_f32_c_types_in_every_layout_without_spills) {
  const std::vector<KernelConfig> configs = {wgmma_config(64, 64, 1, 5, 1, 0, 64),
                                             wgmma_config(128, 128, 2, 3, 1, 0, 4),
                                             wgmma_config(128, 64, 1, 4, 1, 0, 16)};
  std::vector<Case> cases;
  for (const char* types : {"tf32", "f32x3", "f16_out_f32"})
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        cases.push_back({configs[cases.size() % configs.size()], parse_gemm_types(types), a, b});
  for (Op a : {Op::N, Op::T})  // PACK=1's unbounded copies, split into an f32 C
    cases.push_back({wgmma_config(128, 64, 1, 4, 1, 1, 4), gemm_types("bf16", "f32"), a, a});
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << problems.front();
}

size_t count_of(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// SPLIT_K > 1 reads its slice range from the z index and adds with f32 atomics; SPLIT_K=1
// (f16_out_f32: no packs, whose f32x3 form also reads z) stores C plainly.
TEST(GemmWgmmaPtx, split_k_adds_with_f32_atomics_by_the_z_index_and_split_1_has_none) {
  const GemmTypes types = gemm_types("f16", "f32");
  const std::string split = ptx_of(wgmma_config(128, 128, 2, 4, 1, 0, 4), types, Op::N, Op::T);
  const std::string plain = ptx_of(wgmma_config(128, 128, 2, 4, 1, 0, 1), types, Op::N, Op::T);
  const size_t adds =
      count_of(split, "red.global.add.f32") + count_of(split, "atom.global.add.f32");
  EXPECT_GE(adds, 2u) << "no f32 atomic add in the split-K epilogue";
  EXPECT_TRUE(contains(split, "%ctaid.z")) << "the K slice range";
  EXPECT_TRUE(contains(split, ".entry gemm_wgmma_prepare_c"));
  EXPECT_EQ(count_of(plain, "red.global.add") + count_of(plain, "atom.global.add"), 0u);
  EXPECT_FALSE(contains(plain, "%ctaid.z"));
  const std::string tf32 =
      ptx_of(wgmma_config(64, 64, 1, 5, 1, 0, 64), gemm_types("tf32"), Op::T, Op::N);
  EXPECT_GE(count_of(tf32, "red.global.add.f32") + count_of(tf32, "atom.global.add.f32"), 2u);
}

// C = beta * C first (the blocks add into it), then the packs, then the main launch over
// SPLIT_K z blocks; the model sees the split in the description's tile.
TEST(GemmWgmmaHost, plans_split_k_as_prepare_c_first_then_the_packs_and_grid_z) {
  const KernelConfig c = wgmma_config(128, 128, 2, 4, 1, 0, 16);
  const std::vector<std::string> entries = wgmma().entries(c);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[1], "gemm_wgmma_pack_a");
  EXPECT_EQ(entries[3], "gemm_wgmma_prepare_c");
  EXPECT_EQ(wgmma().entries(wgmma_config(128, 128, 2, 4, 8)).size(), 3u);
  const Problem tf32 = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 1000, 1000, 520);
  EXPECT_EQ(wgmma().describe(c, tf32).tile.split_k, 16);
  EXPECT_EQ(wgmma().describe(wgmma_config(128, 128, 2, 4, 8), tf32).tile.split_k, 1);

  const LaunchPlan plan = wgmma().plan_launch(c, tf32);
  ASSERT_EQ(plan.count, 4);
  EXPECT_EQ(plan.launches[0].entry, 3);
  EXPECT_EQ(plan.launches[0].block[0], 256u);
  EXPECT_EQ(plan.launches[1].entry, 1);
  EXPECT_EQ(plan.launches[2].entry, 2);
  EXPECT_EQ(plan.launches[3].entry, 0);
  EXPECT_EQ(plan.launches[3].grid[2], 16u);
  EXPECT_EQ(plan.launches[3].grid[0], 8u);  // 1000 / 128, rounded up
  // The packs cover all of K once, whatever the split: A and B 1024 x 544 f32.
  EXPECT_EQ(plan.workspace_bytes, size_t(2 * 1024 * 544 * 4));

  const Problem f16 = Problem::packed(gemm_types("f16", "f32"), Op::N, Op::T, 1000, 1000, 520);
  const LaunchPlan two = wgmma().plan_launch(c, f16);
  ASSERT_EQ(two.count, 2);
  EXPECT_EQ(two.launches[0].entry, 3);
  EXPECT_EQ(two.launches[1].entry, 0);
  EXPECT_EQ(two.launches[1].grid[2], 16u);
  EXPECT_EQ(two.workspace_bytes, 0u);
  const LaunchPlan one = wgmma().plan_launch(wgmma_config(128, 128, 2, 4, 8), f16);
  ASSERT_EQ(one.count, 1);
  EXPECT_EQ(one.launches[0].grid[2], 1u);
}

TEST(GemmWgmmaHost, refuses_split_k_into_a_16_bit_c_and_takes_every_f32_c) {
  const KernelConfig c = wgmma_config(128, 128, 2, 4, 1, 0, 2);
  for (const char* types : {"f16", "bf16"}) {
    SCOPED_TRACE(types);
    const GemmTypes t = parse_gemm_types(types);
    const auto why =
        wgmma().unsupported_reason(c, Problem::packed(t, Op::N, Op::N, 64, 64, 4096), "sm_90");
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "SPLIT_K=2")) << *why;
    EXPECT_TRUE(contains(*why, "f32 atomics")) << *why;
    EXPECT_TRUE(contains(*why, std::string("C is ") + types)) << *why;
    EXPECT_TRUE(wgmma().types_unsupported_by(c, t, "sm_90")) << "the tuner skips it unbuilt";
    EXPECT_FALSE(wgmma().unsupported_reason(
        wgmma_config(128, 128, 2, 4, 8), Problem::packed(t, Op::N, Op::N, 64, 64, 4096), "sm_90"));
  }
  for (const char* types : {"tf32", "f32x3", "f16_out_f32", "bf16_out_f32"}) {
    SCOPED_TRACE(types);
    const KernelConfig fits = wgmma_config(128, 64, 1, 4, 1, 0, 16);
    EXPECT_EQ(
        wgmma().unsupported_reason(
            fits, Problem::packed(parse_gemm_types(types), Op::T, Op::N, 64, 64, 4096), "sm_90"),
        std::nullopt);
  }
  const auto zero = wgmma().unsupported_reason(
      wgmma_config(128, 128, 2, 4, 8, 0, 0),
      Problem::packed(gemm_types("tf32"), Op::N, Op::N, 64, 64, 64), "sm_90");
  ASSERT_TRUE(zero);
  EXPECT_TRUE(contains(*zero, "SPLIT_K=0")) << *zero;
}

// 64 slices only on 64x64, 128x64 and 64x128 tiles; 16 on tiles of at most 128x128.
TEST(GemmWgmmaSpace, keeps_deep_splits_to_small_tiles_with_a_reason) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const ArchLimits sm90 = arch_limits("sm_90");
  for (auto [bm, bn] : {std::pair{64, 64}, {128, 64}, {64, 128}})
    EXPECT_FALSE(space.rejection(wgmma_config(bm, bn, 1, 4, 1, 0, 64), sm90)) << bm << "x" << bn;
  const auto big64 = space.rejection(wgmma_config(128, 128, 2, 4, 1, 0, 64), sm90);
  ASSERT_TRUE(big64);
  EXPECT_TRUE(contains(*big64, "64 K slices")) << *big64;
  EXPECT_FALSE(space.rejection(wgmma_config(128, 128, 2, 4, 1, 0, 16), sm90));
  const auto big16 = space.rejection(wgmma_config(128, 256, 2, 4, 1, 0, 16), sm90);
  ASSERT_TRUE(big16);
  EXPECT_TRUE(contains(*big16, "16 and 64 K slices")) << *big16;
  EXPECT_FALSE(space.rejection(wgmma_config(128, 256, 2, 4, 1, 0, 4), sm90));
  const auto legal = space.enumerate(sm90).legal;
  std::set<int64_t> splits;
  for (const KernelConfig& c : legal) splits.insert(c.get("SPLIT_K"));
  EXPECT_EQ(splits, (std::set<int64_t>{1, 2, 4, 16, 64}));
  const auto swizzled = space.rejection(wgmma_config(128, 64, 1, 4, 8, 0, 2), sm90);
  ASSERT_TRUE(swizzled);
  EXPECT_TRUE(contains(*swizzled, "SWIZZLE 1")) << *swizzled;
  // Each type builds two of the three PACK values (tf32 0 and 2, 16-bit 0 and 1, f32x3 0).
  EXPECT_LE(legal.size(), 500u) << "the space grew past what a tune can cover";
}

// tf32 PACK=2: the K-major operands (A stored [m][k], B stored [n][k]) are read in place, the
// MN-major ones packed: NT one launch and no workspace, NN and TT one pack, TN both; any f32
// alignment; other types refuse it before compiling.
TEST(GemmWgmmaHost, tf32_pack_2_packs_only_the_mn_major_operands) {
  const KernelConfig c = wgmma_config(128, 128, 2, 4, 8, 2);
  const GemmTypes tf32 = gemm_types("tf32");
  auto plan = [&](Op a, Op b) {
    Problem p = Problem::packed(tf32, a, b, 1000, 1000, 520);
    p.align_a = p.align_b = 4;
    EXPECT_EQ(wgmma().unsupported_reason(c, p, "sm_90"), std::nullopt);
    return wgmma().plan_launch(c, p);
  };
  const LaunchPlan nt = plan(Op::N, Op::T);
  ASSERT_EQ(nt.count, 1);
  EXPECT_EQ(nt.workspace_bytes, 0u);
  const LaunchPlan nn = plan(Op::N, Op::N);  // B [k][n]: packed as [n][k], 1024 x 544
  ASSERT_EQ(nn.count, 2);
  EXPECT_EQ(nn.launches[0].entry, 2);
  EXPECT_EQ(nn.workspace_bytes, size_t(1024 * 544 * 4));
  const LaunchPlan tt = plan(Op::T, Op::T);  // A [k][m]: packed as [m][k]
  ASSERT_EQ(tt.count, 2);
  EXPECT_EQ(tt.launches[0].entry, 1);
  EXPECT_EQ(tt.workspace_bytes, size_t(1024 * 544 * 4));
  const LaunchPlan tn = plan(Op::T, Op::N);
  ASSERT_EQ(tn.count, 3);
  EXPECT_EQ(tn.workspace_bytes, size_t(2 * 1024 * 544 * 4));
  for (const char* types : {"f16", "bf16_out_f32", "f32x3"}) {
    const auto why = wgmma().types_unsupported_by(c, parse_gemm_types(types), "sm_90");
    ASSERT_TRUE(why) << types;
    EXPECT_TRUE(contains(*why, "tf32 only")) << *why;
  }
  const std::string ptx = ptx_of(c, tf32, Op::N, Op::T);
  EXPECT_TRUE(contains(ptx, "cp.async.ca.shared.global")) << "4-byte copies in place";
  EXPECT_TRUE(contains(ptx, "], 4, ")) << "4-byte copies in place";
}

// Every legal PACK=2 config builds clean for tf32, the layouts spread across them (NT reads
// both operands in place, NN and TT one), without spills or serialized wgmmas (a branch among
// the copies once serialized them).
TEST(GemmWgmmaCompile, every_tf32_pack_2_config_builds_without_spills) {
  const auto legal = SearchSpace::load(kSpace).enumerate(arch_limits("sm_90")).legal;
  std::vector<Case> cases;
  std::set<std::string> seen;
  const Op layouts[][2] = {{Op::N, Op::T}, {Op::N, Op::N}, {Op::T, Op::T}};
  for (const KernelConfig& c : legal) {
    if (c.get("PACK") != 2 || c.get("STAGES") == 3 || !seen.insert(build_key(c)).second) continue;
    const auto& l = layouts[cases.size() % 3];
    cases.push_back({c, gemm_types("tf32"), l[0], l[1]});
  }
  ASSERT_GE(cases.size(), 8u);
  EXPECT_LE(cases.size(), 40u) << "the case list grew: keep the build time bounded";
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << problems.front();
}

}  // namespace
}  // namespace tgemm
