// gemm_tma_wgmma without a GPU: its shipped defaults and a sample of its legal space compile for
// sm_90 (as sm_90a) without spills in every type and layout it computes; the PTX holds the
// tensor copies, the mbarrier ring, wgmma and the register split; the space and the host side
// refuse other archs, f32x3 and misaligned operands with a reason; tf32 and FP8 pack their
// MN-major operands;
// the plan is persistent (at most one block per SM), names the tensor maps the launch encodes,
// and adds the split reduction with its workspace.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "src/core/error.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/hopper_builds.h"
#include "tests/common/template_ptx.h"
#include "tests/common/tma_configs.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const char* kSpace = TGEMM_SOURCE_DIR "/configs/spaces/gemm_tma_wgmma.yaml";

const GemmTemplate& family() { return template_named("gemm_tma_wgmma"); }

using testing::tma_config;

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

using Case = testing::HopperCase;

std::vector<std::string> unclean_builds(const std::vector<Case>& cases) {
  return testing::unclean_hopper_builds(family(), cases);
}

std::string first_of(const std::vector<std::string>& v) { return v.empty() ? "" : v.front(); }

TEST(GemmTmaWgmmaCompile, the_shipped_defaults_build_in_every_type_and_layout) {
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const DefaultKernel& d : shipped_default_kernels())
    if (d.config.template_name == "gemm_tma_wgmma" && seen.insert(d.config.canonical_name()).second)
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          cases.push_back(
              {d.config, gemm_types(a == b ? "f16" : "bf16", a == b ? "f16" : "f32"), a, b});
  ASSERT_FALSE(seen.empty()) << "no gemm_tma_wgmma default line";
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << first_of(problems);
}

// Every 113th legal config (a spread over tiles, consumers, stages, cluster shapes and stores),
// f16 NT and bf16 TN, and tf32 NT on every 339th.
TEST(GemmTmaWgmmaCompile, a_sample_of_the_legal_space_builds_without_spills) {
  const auto legal = SearchSpace::load(kSpace).enumerate(arch_limits("sm_90")).legal;
  ASSERT_GT(legal.size(), 50u);
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (size_t i = 0; i < legal.size(); i += 113) {
    KernelConfig c = legal[i];
    c.set("SWIZZLE", 1);  // changes no resource
    if (!seen.insert(c.canonical_name()).second) continue;
    cases.push_back({c, gemm_types("f16"), Op::N, Op::T});
    cases.push_back({c, gemm_types("bf16", "f32"), Op::T, Op::N});
    if (i % 339 == 0) cases.push_back({c, gemm_types("tf32"), Op::N, Op::T});
  }
  EXPECT_LE(cases.size(), 60u) << "the case list grew: keep the build time bounded";
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << first_of(problems);
}

std::string ptx_of(const KernelConfig& config, const GemmTypes& types, Op a, Op b) {
  return testing::template_ptx(family(), config, Problem::packed(types, a, b, 1, 1, 1),
                               "compute_90a");
}

TEST(GemmTmaWgmmaPtx, holds_tensor_copies_the_mbarrier_ring_wgmma_and_the_register_split) {
  const std::string nt = ptx_of(tma_config(128, 256, 2, 4), gemm_types("bf16"), Op::N, Op::T);
  EXPECT_TRUE(contains(nt, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx"));
  EXPECT_TRUE(contains(nt, "mbarrier.try_wait.parity.shared::cta.b64"));
  EXPECT_TRUE(contains(nt, "mbarrier.arrive.expect_tx.shared::cta.b64"));
  EXPECT_TRUE(contains(nt, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
  EXPECT_TRUE(contains(nt, "p, 1, 1, 0, 0;")) << "A and B K-major";
  EXPECT_TRUE(contains(nt, "setmaxnreg.dec.sync.aligned.u32 40"));
  EXPECT_TRUE(contains(nt, "setmaxnreg.inc.sync.aligned.u32 232"));
  EXPECT_FALSE(contains(nt, "cp.async.cg")) << "no thread-issued copies";
  const std::string nn = ptx_of(tma_config(128, 128, 1, 4), gemm_types("f16"), Op::T, Op::N);
  EXPECT_TRUE(contains(nn, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"));
  EXPECT_TRUE(contains(nn, "p, 1, 1, 1, 1;")) << "A and B MN-major";
  EXPECT_FALSE(contains(nn, "setmaxnreg")) << "one consumer keeps the launch's registers";
  const std::string tf32 = ptx_of(tma_config(128, 192, 2, 4), gemm_types("tf32"), Op::N, Op::T);
  EXPECT_TRUE(contains(tf32, "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32"));
  EXPECT_FALSE(contains(tf32, "multicast"));
  const std::string pair =
      ptx_of(tma_config(128, 256, 2, 4, 8, 1, 2), gemm_types("f16"), Op::N, Op::T);
  EXPECT_TRUE(contains(pair, ".multicast::cluster")) << "B shared by the cluster's blocks";
  EXPECT_TRUE(contains(pair, "mbarrier.arrive.shared::cluster.b64"));
  EXPECT_TRUE(contains(pair, "barrier.cluster.arrive"));
  EXPECT_TRUE(contains(pair, ".explicitcluster") || contains(pair, ".reqnctapercluster 2"))
      << "the kernel declares its cluster shape";
  const std::string four =
      ptx_of(tma_config(128, 128, 2, 4, 8, 1, 2, 2), gemm_types("bf16"), Op::N, Op::N);
  EXPECT_TRUE(contains(four, ".reqnctapercluster 4")) << "2 x 2 blocks in one cluster";
  EXPECT_TRUE(contains(four, ".multicast::cluster"));
}

// FP8: k32 wgmmas of the problem's pair of formats on 128-deep slices (one 128-byte row of K);
// the shipped fp8 lines build clean for two pairs and outputs; layouts other than NT are
// refused with the reason, as tf32's.
TEST(GemmTmaWgmmaPtx, fp8_issues_k32_wgmmas_of_its_pair_of_formats) {
  const std::string e4m3 = ptx_of(tma_config(128, 128, 2, 4), gemm_types("e4m3"), Op::N, Op::T);
  EXPECT_TRUE(contains(e4m3, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"));
  EXPECT_FALSE(contains(e4m3, "k16")) << "no 16-bit step";
  const std::string mixed =
      ptx_of(tma_config(64, 64, 1, 4), gemm_types("e5m2_e4m3", "f32"), Op::N, Op::T);
  EXPECT_TRUE(contains(mixed, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e4m3"));
  const std::string plain = ptx_of(tma_config(128, 256, 2, 4), gemm_types("bf16"), Op::N, Op::T);
  EXPECT_FALSE(contains(plain, "e4m3"));
}

TEST(GemmTmaWgmmaCompile, the_fp8_defaults_build_clean) {
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const DefaultKernel& d : shipped_default_kernels())
    if (d.types.fp8() && seen.insert(d.config.canonical_name()).second) {
      cases.push_back({d.config, gemm_types("e4m3"), Op::N, Op::T});
      cases.push_back({d.config, gemm_types("e5m2_e4m3", "f32"), Op::N, Op::T});
      if (d.config.get("SPLIT_K") != 1) continue;
      cases.push_back({d.config, gemm_types("e4m3"), Op::T, Op::N});  // packs MN-major operands
      Epilogue rowwise;  // a build of its own, scaling each pair of sums as it leaves
      rowwise.rowwise_scales = true;
      cases.push_back({d.config, gemm_types("e4m3"), Op::N, Op::T, rowwise});
    }
  ASSERT_EQ(seen.size(), 4u) << "the fp8 lines of configs/default_kernels.txt";
  const auto problems = unclean_builds(cases);
  EXPECT_TRUE(problems.empty()) << problems.size() << " unclean, first: " << first_of(problems);
}

TEST(GemmTmaWgmmaHost, fp8_reads_k_major_operands_in_128_byte_boxes) {
  const KernelConfig c = tma_config(128, 128, 2, 4);
  const Problem nt = Problem::packed(gemm_types("e4m3"), Op::N, Op::T, 4096, 4096, 4096);
  EXPECT_FALSE(family().unsupported_reason(c, nt, "sm_90"));
  const LaunchPlan plan = family().plan_launch(c, nt, 132);
  EXPECT_EQ(plan.map_a.box_inner, 128) << "128 one-byte elements of K";
  EXPECT_EQ(plan.map_a.row_bytes, 4096);
  EXPECT_EQ(plan.count, 1) << "NT reads both operands where they are";
  EXPECT_EQ(plan.workspace_bytes, 0u);
  // Two sets of accumulators: a consumer's 64 x 192 fits, its 64 x 256 or two m64 tiles of 128
  // do not.
  EXPECT_FALSE(family().unsupported_reason(tma_config(128, 192, 2, 4), nt, "sm_90"));
  for (const KernelConfig& wide : {tma_config(128, 256, 2, 4), tma_config(256, 128, 2, 4)}) {
    const auto why = family().unsupported_reason(wide, nt, "sm_90");
    ASSERT_TRUE(why) << wide.canonical_name();
    EXPECT_TRUE(contains(*why, "promotion")) << *why;
  }
  EXPECT_TRUE(family().types_unsupported(gemm_types("e4m3"), "sm_80"));
  EXPECT_TRUE(template_named("gemm_wgmma").types_unsupported(gemm_types("e4m3"), "sm_90"))
      << "only the TMA family has FP8 steps";
}

// FP8 wgmma reads K-major operands only: in the other layouts a first launch packs each operand
// stored MN-major K-major into the workspace (rows of K padded to 16 bytes, A first), and the
// main launch's map of it reads the workspace; an operand stored K-major is read where it is.
TEST(GemmTmaWgmmaHost, fp8_packs_its_mn_major_operands_into_the_workspace) {
  const KernelConfig c = tma_config(128, 128, 2, 4);
  // K of 1000 in TN (both operands packed: rows padded to 1008 bytes), of 1008 where one
  // operand is read in place (its rows must be 16-byte aligned).
  const int64_t m = 300, n = 200, row = 1008;
  const int64_t a_bytes = (m * row + 255) / 256 * 256, b_bytes = (n * row + 255) / 256 * 256;
  struct Expect {
    Op a, b;
    bool packs_a, packs_b;
    int64_t k;
  };
  for (const Expect e :
       {Expect{Op::T, Op::T, true, false, 1008}, Expect{Op::N, Op::N, false, true, 1008},
        Expect{Op::T, Op::N, true, true, 1000}}) {
    const int64_t k = e.k;
    const Problem p = Problem::packed(gemm_types("e4m3"), e.a, e.b, m, n, k);
    SCOPED_TRACE(p.key());
    ASSERT_FALSE(family().unsupported_reason(c, p, "sm_90"));
    const LaunchPlan plan = family().plan_launch(c, p, 132);
    ASSERT_EQ(plan.count, 2);
    const std::vector<std::string> entries = family().entries(c, p.types);
    EXPECT_EQ(entries[size_t(plan.launches[0].entry)], "gemm_tma_wgmma_pack");
    EXPECT_EQ(plan.launches[1].entry, 0);
    EXPECT_EQ(plan.launches[0].grid[2], 2u) << "one layer of blocks per operand";
    EXPECT_EQ(plan.workspace_bytes, size_t(a_bytes + (e.packs_b ? b_bytes : 0)));
    EXPECT_EQ(plan.map_a.workspace_offset, e.packs_a ? 0 : -1);
    EXPECT_EQ(plan.map_b.workspace_offset, e.packs_b ? a_bytes : -1);
    const TensorMapView& packed = e.packs_a ? plan.map_a : plan.map_b;
    EXPECT_EQ(packed.row_bytes, row);
    EXPECT_EQ(packed.inner, k) << "K-major: K is the inner extent";
    EXPECT_EQ(packed.box_inner, 128);
  }
  // Split-K keeps its partial sums in the workspace: not with packed operands.
  const int64_t k = 1000;
  const Problem tn = Problem::packed(gemm_types("e4m3"), Op::T, Op::N, m, n, k);
  const auto why = family().unsupported_reason(tma_config(128, 128, 2, 4, 1, 4), tn, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "SPLIT_K must be 1")) << *why;
  // A packed operand may be misaligned; one read in place may not.
  Problem odd = Problem::packed(gemm_types("e4m3"), Op::T, Op::T, m, n, 1008);
  odd.align_a = 1;
  EXPECT_FALSE(family().unsupported_reason(c, odd, "sm_90")) << "A is packed";
  odd.align_b = 1;
  EXPECT_TRUE(family().unsupported_reason(c, odd, "sm_90")) << "B is read in place";
  // The packed copies are bounded as other packs are (1 GiB): 32768 x 32768 x 32768 TN is not.
  const auto huge = family().unsupported_reason(
      c, Problem::packed(gemm_types("e4m3"), Op::T, Op::N, 32768, 32768, 32768), "sm_90");
  ASSERT_TRUE(huge);
  EXPECT_TRUE(contains(*huge, "MiB of workspace")) << *huge;
  // 16-bit builds read MN-major operands as they are: no pack entry.
  EXPECT_EQ(family().entries(c, gemm_types("bf16")).size(), 1u);
}

// tf32 wgmma reads K-major operands only too: its MN-major operands are packed as FP8's, in
// 32 x 32 tiles of 4-byte elements (rows of K padded to 16 bytes: 4 elements).
TEST(GemmTmaWgmmaHost, tf32_packs_its_mn_major_operands_into_the_workspace) {
  const KernelConfig c = tma_config(128, 128, 2, 4);
  const int64_t m = 300, n = 200, k = 1001, ld = 1004;  // packed rows: 1004 elements
  const int64_t a_bytes = (m * ld * 4 + 255) / 256 * 256;
  const Problem tn = Problem::packed(gemm_types("tf32"), Op::T, Op::N, m, n, k);
  ASSERT_FALSE(family().unsupported_reason(c, tn, "sm_90"));
  const LaunchPlan plan = family().plan_launch(c, tn, 132);
  ASSERT_EQ(plan.count, 2);
  const std::vector<std::string> entries = family().entries(c, tn.types);
  EXPECT_EQ(entries[size_t(plan.launches[0].entry)], "gemm_tma_wgmma_pack");
  const KernelLaunch& pack = plan.launches[0];
  EXPECT_EQ(pack.block[0] * pack.block[1], 256u);
  EXPECT_EQ(pack.grid[0], unsigned((ld + 31) / 32)) << "K's packed columns, 32 a tile";
  EXPECT_EQ(pack.grid[1], unsigned((m + 31) / 32)) << "the longer operand's rows";
  EXPECT_EQ(plan.workspace_bytes, size_t(a_bytes + (n * ld * 4 + 255) / 256 * 256));
  EXPECT_EQ(plan.map_a.workspace_offset, 0);
  EXPECT_EQ(plan.map_b.workspace_offset, a_bytes);
  EXPECT_EQ(plan.map_a.row_bytes, ld * 4);
  EXPECT_EQ(plan.map_a.inner, k);
  EXPECT_EQ(plan.map_a.box_inner, 32) << "one 128-byte row of K: 32 f32";
  // NT reads both where they are.
  const LaunchPlan nt =
      family().plan_launch(c, Problem::packed(gemm_types("tf32"), Op::N, Op::T, m, n, 1004), 132);
  EXPECT_EQ(nt.count, 1);
  EXPECT_EQ(nt.workspace_bytes, 0u);
}

TEST(GemmTmaWgmmaCompile, the_pack_entry_is_in_tf32_and_fp8_builds_only) {
  const std::string tn = ptx_of(tma_config(128, 128, 2, 4), gemm_types("e4m3"), Op::T, Op::N);
  EXPECT_TRUE(contains(tn, ".entry gemm_tma_wgmma_pack"));
  EXPECT_TRUE(contains(tn, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"));
  const std::string tf32 = ptx_of(tma_config(128, 128, 2, 4), gemm_types("tf32"), Op::N, Op::N);
  EXPECT_TRUE(contains(tf32, ".entry gemm_tma_wgmma_pack"));
  EXPECT_TRUE(contains(tf32, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"));
  const std::string bf16 = ptx_of(tma_config(128, 128, 2, 4), gemm_types("bf16"), Op::T, Op::N);
  EXPECT_FALSE(contains(bf16, "gemm_tma_wgmma_pack"));
}

TEST(GemmTmaWgmmaSpace, refuses_sm_75_and_sm_80_and_f32x3_with_a_readable_reason) {
  const SearchSpace space = SearchSpace::load(kSpace);
  for (const char* arch : {"sm_75", "sm_80"}) {
    SCOPED_TRACE(arch);
    for (const char* type : {"f16", "bf16", "tf32"}) {
      const auto by_family = family().types_unsupported(parse_gemm_types(type), arch);
      ASSERT_TRUE(by_family);
      EXPECT_TRUE(contains(*by_family, "sm_90a")) << *by_family;
    }
    const auto why = space.rejection(tma_config(128, 256, 2, 4), arch_limits(arch));
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "sm_90a only")) << *why;
  }
  EXPECT_FALSE(space.rejection(tma_config(128, 256, 2, 4), arch_limits("sm_90")));
  for (const char* type : {"f32x3", "f32"}) {
    const auto why = family().types_unsupported(parse_gemm_types(type), "sm_90");
    ASSERT_TRUE(why) << type;
    EXPECT_TRUE(contains(*why, "not " + std::string(type))) << *why;
  }
  const auto acc = space.rejection(tma_config(256, 256, 2, 3), arch_limits("sm_90"));
  ASSERT_TRUE(acc);
  EXPECT_TRUE(contains(*acc, "accumulators")) << *acc;
  const auto smem = space.rejection(tma_config(128, 256, 2, 5), arch_limits("sm_90"));
  ASSERT_TRUE(smem);
  EXPECT_TRUE(contains(*smem, "shared memory")) << *smem;
}

// Cluster shapes past two blocks a side and stores the kernel does not build are refused with
// the space's reason, the check a stored row goes through too.
TEST(GemmTmaWgmmaSpace, refuses_clusters_past_two_a_side_and_staged_split_configs) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const ArchLimits sm90 = arch_limits("sm_90");
  const auto expect_refused = [&](const KernelConfig& c, const std::string& reason) {
    const auto why = space.rejection(c, sm90);
    ASSERT_TRUE(why) << c.canonical_name();
    EXPECT_TRUE(contains(*why, reason)) << *why;
  };
  expect_refused(tma_config(128, 256, 2, 4, 8, 1, 1, 3), "two cluster blocks along N");
  expect_refused(tma_config(128, 256, 2, 4, 8, 1, 4, 1), "two cluster blocks along M");
  expect_refused(tma_config(128, 128, 2, 4, 8, 1, 1, 1, 2), "TMA_STORE is 0 or 1");
  expect_refused(tma_config(128, 128, 2, 4, 1, 2, 1, 1, 1), "stage nothing");
  EXPECT_FALSE(space.rejection(tma_config(128, 128, 2, 4, 8, 1, 2, 2, 1), sm90));
}

TEST(GemmTmaWgmmaHost, refuses_misaligned_operands_and_empty_sizes) {
  const KernelConfig c = tma_config(128, 256, 2, 4);
  Problem p = Problem::packed(gemm_types("f16"), Op::N, Op::N, 4096, 4096, 4096);
  EXPECT_FALSE(family().unsupported_reason(c, p, "sm_90"));
  p.align_b = 8;
  const auto why = family().unsupported_reason(c, p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "16-byte")) << *why;
  EXPECT_TRUE(contains(*why, "have 16 and 8")) << *why;
  const Problem nt = Problem::packed(gemm_types("tf32"), Op::N, Op::T, 512, 512, 512);
  EXPECT_FALSE(family().unsupported_reason(c, nt, "sm_90"));
  Problem nn = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 512, 512, 512);
  nn.align_b = 4;
  EXPECT_FALSE(family().unsupported_reason(c, nn, "sm_90")) << "B is packed from any alignment";
  const Problem empty = Problem::packed(gemm_types("f16"), Op::N, Op::T, 64, 64, 0);
  const auto k0 = family().unsupported_reason(c, empty, "sm_90");
  ASSERT_TRUE(k0);
  EXPECT_TRUE(contains(*k0, "at least 1")) << *k0;
}

TEST(GemmTmaWgmmaHost, plans_a_persistent_grid_with_the_operands_tensor_maps) {
  const KernelConfig c = tma_config(128, 256, 2, 4);
  Problem p = Problem::packed(gemm_types("bf16"), Op::N, Op::N, 4096, 2048, 1000);
  p.lda = 1008;  // padded rows
  const LaunchPlan plan = family().plan_launch(c, p, 132);
  ASSERT_EQ(plan.count, 1);
  EXPECT_EQ(plan.launches[0].grid[0], 132u) << "32 x 8 tiles walked by one block per SM";
  // Clusters of two take two tile rows per unit: 16 x 8 units, 66 clusters.
  EXPECT_EQ(family().plan_launch(tma_config(128, 256, 2, 4, 8, 1, 2), p, 132).launches[0].grid[0],
            132u);
  const Problem few = Problem::packed(gemm_types("f16"), Op::N, Op::T, 384, 512, 64);
  EXPECT_EQ(family().plan_launch(tma_config(128, 256, 2, 4, 8, 1, 2), few, 132).launches[0].grid[0],
            8u)
      << "2 cluster rows (the last half outside C) x 2 columns, two blocks each";
  EXPECT_EQ(family().plan_launch(tma_config(128, 256, 2, 4, 8, 1, 2), few, 132).launches[0].cluster,
            2u);
  // Each block of a pair copies half of a K-major B's rows; MN-major boxes stay whole.
  EXPECT_EQ(family().plan_launch(tma_config(128, 256, 2, 4, 8, 1, 2), few, 132).map_b.box_outer,
            128);
  EXPECT_EQ(family().plan_launch(tma_config(128, 256, 2, 4, 8, 1, 2), p, 132).map_b.box_outer, 64);
  // Sharing A along N: two tile columns per unit (32 x 4 units), each block copies half of a
  // K-major A's rows; 3 x 1 units of the few tiles (the second column outside C).
  const KernelConfig along_n = tma_config(128, 256, 2, 4, 8, 1, 1, 2);
  EXPECT_EQ(family().plan_launch(along_n, p, 132).launches[0].grid[0], 132u);
  EXPECT_EQ(family().plan_launch(along_n, p, 132).map_a.box_outer, 64);
  EXPECT_EQ(family().plan_launch(along_n, p, 132).map_b.box_outer, 64);
  EXPECT_EQ(family().plan_launch(along_n, few, 132).launches[0].grid[0], 6u);
  EXPECT_EQ(family().plan_launch(along_n, few, 132).launches[0].cluster, 2u);
  // Both: 2 x 1 units of four blocks each, a quarter of neither operand (halves of both).
  const KernelConfig both = tma_config(128, 256, 2, 4, 8, 1, 2, 2);
  EXPECT_EQ(family().plan_launch(both, few, 132).launches[0].grid[0], 8u);
  EXPECT_EQ(family().plan_launch(both, few, 132).launches[0].cluster, 4u);
  EXPECT_EQ(family().plan_launch(both, few, 132).map_a.box_outer, 64);
  EXPECT_EQ(family().plan_launch(both, few, 132).map_b.box_outer, 128);
  EXPECT_EQ(plan.launches[0].block[0], 384u);
  EXPECT_TRUE(plan.launches[0].persistent) << "the launch may cut the grid to what is resident";
  EXPECT_EQ(plan.launches[0].smem_bytes, size_t(4 * (128 + 256) * 128 + 1024));
  EXPECT_EQ(plan.workspace_bytes, 0u);
  ASSERT_TRUE(plan.uses_tensor_maps());
  // A stored [m][k]: K inner, boxes of 64 k by 128 rows.
  EXPECT_EQ(plan.map_a.inner, 1000);
  EXPECT_EQ(plan.map_a.outer, 4096);
  EXPECT_EQ(plan.map_a.row_bytes, 1008 * 2);
  EXPECT_EQ(plan.map_a.box_inner, 64);
  EXPECT_EQ(plan.map_a.box_outer, 128);
  // B stored [k][n]: N inner, boxes of 64 columns by one 64-deep slice.
  EXPECT_EQ(plan.map_b.inner, 2048);
  EXPECT_EQ(plan.map_b.outer, 1000);
  EXPECT_EQ(plan.map_b.box_inner, 64);
  EXPECT_EQ(plan.map_b.box_outer, 64);
  EXPECT_EQ(plan.map_b.dtype, DType::bf16);
  // Fewer units than SMs: one block each; no GPU known: one block per unit.
  const Problem small = Problem::packed(gemm_types("f16"), Op::N, Op::T, 256, 512, 64);
  EXPECT_EQ(family().plan_launch(c, small, 132).launches[0].grid[0], 4u);
  EXPECT_EQ(family().plan_launch(c, p, 0).launches[0].grid[0], 256u);
}

// TMA_STORE: C's map in boxes of one staged chunk (128 bytes of columns by 64 rows), two
// chunks per consumer in shared memory; split configs stage nothing.
TEST(GemmTmaWgmmaHost, tensor_stores_map_c_in_chunks_and_stage_them_after_the_ring) {
  const KernelConfig staged = tma_config(128, 256, 2, 4, 8, 1, 2, 1, 1);
  Problem p = Problem::packed(gemm_types("bf16"), Op::N, Op::T, 1000, 520, 64);
  p.ldc = 528;
  const LaunchPlan plan = family().plan_launch(staged, p, 132);
  ASSERT_TRUE(plan.stores_by_tensor_map());
  EXPECT_EQ(plan.map_c.dtype, DType::bf16);
  EXPECT_EQ(plan.map_c.inner, 520);
  EXPECT_EQ(plan.map_c.outer, 1000);
  EXPECT_EQ(plan.map_c.row_bytes, 528 * 2);
  EXPECT_EQ(plan.map_c.box_inner, 64);
  EXPECT_EQ(plan.map_c.box_outer, 64);
  EXPECT_EQ(plan.launches[0].smem_bytes, size_t(4 * (128 + 256) * 128 + 1024 + 2 * 2 * 64 * 128));
  const Problem f32_out = Problem::packed(gemm_types("bf16", "f32"), Op::N, Op::T, 64, 64, 64);
  EXPECT_EQ(family().plan_launch(staged, f32_out, 132).map_c.box_inner, 32);
  EXPECT_FALSE(family().plan_launch(tma_config(128, 256, 2, 4, 8), p, 132).stores_by_tensor_map());
  EXPECT_FALSE(family()
                   .plan_launch(tma_config(128, 128, 2, 4, 1, 2, 1, 1, 1), p, 132)
                   .stores_by_tensor_map())
      << "split partial sums go to the workspace";
}

TEST(GemmTmaWgmmaHost, split_k_adds_the_reduction_and_its_workspace_for_any_c) {
  const KernelConfig c = tma_config(128, 128, 2, 4, 1, 4);
  const Problem p = Problem::packed(gemm_types("bf16"), Op::N, Op::T, 512, 512, 65536);
  ASSERT_FALSE(family().unsupported_reason(c, p, "sm_90"));
  const LaunchPlan plan = family().plan_launch(c, p, 132);
  ASSERT_EQ(plan.count, 2);
  EXPECT_EQ(plan.launches[0].grid[0], 64u) << "16 tiles x 4 ranges";
  EXPECT_EQ(plan.launches[1].entry, 1);
  EXPECT_TRUE(plan.launches[1].early);
  EXPECT_EQ(plan.workspace_bytes, size_t(4) * 512 * 512 * 4);
  EXPECT_EQ(family().entries(c).back(), "gemm_tma_wgmma_reduce");
}

}  // namespace
}  // namespace tgemm
