// Grouped GEMM without a GPU: the problem's bucket and key, the call's checks, the launches'
// tables, the families that serve a grouped build and those that refuse it, and the selector's
// untuned choice for it.
#include "src/dispatch/grouped_problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/core/problem.h"
#include "src/dispatch/dispatcher.h"
#include "src/dispatch/kernel_selector.h"
#include "src/launch/grouped_launches.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/mma_configs.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/thrown_message.h"

namespace tgemm {
namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

GemmTypes f16() { return parse_gemm_types("f16"); }

// The message validate() throws, or "no Error".
std::string invalid_because(const Problem& p) {
  return testing::thrown_message([&] { p.validate(); });
}

// A call of these groups (layout NT, f16, packed leading dimensions) on fake arrays.
GroupedGemmCall call_of(std::vector<CallGroup> groups) {
  GroupedGemmCall call;
  call.types = f16();
  call.groups = std::move(groups);
  call.a = reinterpret_cast<const void* const*>(uintptr_t(1) << 20);
  call.b = reinterpret_cast<const void* const*>(uintptr_t(1) << 21);
  call.c = reinterpret_cast<void* const*>(uintptr_t(1) << 22);
  return call;
}

// Group g: `size` NT problems of m x n x k, packed (leading dimensions at least 1), alpha g + 1
// and beta g.
CallGroup nt_group(int g, int m, int n, int k, int size) {
  const int ld_ab = std::max(k, 1), ldc = std::max(n, 1);
  return {Op::N, Op::T, m, n, k, float(g + 1), float(g), ld_ab, ld_ab, ldc, size};
}

std::string check_message(const GroupedGemmCall& call) {
  return testing::thrown_message([&] { grouped_problem(call); });
}

TEST(GroupedProblem, is_keyed_by_its_heaviest_group_and_problem_count_in_three_bit_buckets) {
  const Problem p = Problem::grouped(
      f16(), Op::N, Op::T, {{300, 4096, 4096, 1}, {1000, 4096, 4096, 1}, {0, 4096, 4096, 1}});
  EXPECT_EQ(p.batch_form(), BatchForm::grouped);
  EXPECT_TRUE(p.batched());
  EXPECT_EQ(p.m, 1024);  // 1000 up to a multiple of 1024 / 8
  EXPECT_EQ(p.n, 4096);
  EXPECT_EQ(p.k, 4096);
  EXPECT_EQ(p.batch, 3);  // the problem without work counts
  EXPECT_EQ(p.functional_key(), "f16_NT_m1024_n4096_k4096_x3g_b0");
  EXPECT_EQ(p.key(), "f16_NT_m1024_n4096_k4096_x3g_b0_a2.2.2");  // pointers out of sight
  // Another step of the same layer (other tokens per expert) shares the key.
  const Problem next = Problem::grouped(
      f16(), Op::N, Op::T, {{900, 4096, 4096, 1}, {600, 4096, 4096, 1}, {0, 4096, 4096, 1}});
  EXPECT_EQ(next.key(), p.key());
  // Sizes keep three significant bits: the weights of other layers keep their own keys.
  const Problem up = Problem::grouped(f16(), Op::N, Op::T, {{612, 1408, 2048, 60}});
  const Problem down = Problem::grouped(f16(), Op::N, Op::T, {{612, 2048, 1408, 60}});
  EXPECT_EQ(up.functional_key(), "f16_NT_m640_n1536_k2048_x64g_b0");
  EXPECT_NE(up.key(), down.key());
  EXPECT_EQ(Problem::grouped(f16(), Op::N, Op::T, {{7, 14336, 9, 1}}).n, 14336);
}

TEST(GroupedProblem, the_heaviest_group_counts_its_problems_and_k) {
  // 2 x 64 x 64 x 64 problems outweigh one 100 x 64 x 64; a deep K outweighs both.
  EXPECT_EQ(Problem::grouped(f16(), Op::N, Op::N, {{100, 64, 64, 1}, {64, 64, 64, 2}}).m, 64);
  const Problem deep =
      Problem::grouped(f16(), Op::N, Op::N, {{100, 64, 64, 1}, {64, 64, 64, 2}, {8, 8, 9000, 1}});
  EXPECT_EQ(deep.m, 8);
  EXPECT_EQ(deep.k, 10240);
}

TEST(GroupedProblem, its_work_is_its_groups_not_its_bucket) {
  const Problem p = Problem::grouped(GemmTypes{}, Op::N, Op::N, {{3, 5, 7, 2}, {1, 9, 4, 3}});
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * (3 * 5 * 7 * 2 + 1 * 9 * 4 * 3));
  EXPECT_DOUBLE_EQ(p.min_bytes(),
                   4.0 * (2 * (3 * 7 + 7 * 5 + 3 * 5) + 3 * (1 * 4 + 4 * 9 + 1 * 9)));
}

TEST(GroupedProblem, a_grouped_problem_without_work_is_refused) {
  EXPECT_HAS(testing::thrown_message([] {
               Problem::grouped(f16(), Op::N, Op::N, {{0, 8, 8, 1}, {8, 8, 8, 0}});
             }),
             "needs a group with work");
}

TEST(GroupedProblem, validate_holds_shape_file_groups_to_sizes_and_counts_of_one_or_more) {
  Problem p = Problem::grouped(f16(), Op::N, Op::N, {{8, 8, 8, 1}, {16, 8, 8, 2}});
  EXPECT_EQ(invalid_because(p), "no Error");
  p.groups[1].count = 0;
  EXPECT_HAS(invalid_because(p), "group 1: count must be >= 1, got 0");
  p.groups[1] = {16, 8, 0, 1};
  EXPECT_HAS(invalid_because(p), "group 1: k must be >= 1, got 0");
  p = Problem::grouped(f16(), Op::N, Op::N, {{8, 8, 8, 1}});
  p.m = 16;  // edited past its groups
  EXPECT_HAS(invalid_because(p), "is not its groups'");
  p = Problem::grouped(f16(), Op::N, Op::N, {{8, 8, 8, 1}});
  p.epilogue.activation = Activation::relu;
  EXPECT_HAS(invalid_because(p), "an epilogue applies to one GEMM");
}

TEST(GroupedCall, reads_the_layout_beta_and_bucket_of_the_groups_with_work) {
  const GroupedProblem g = grouped_problem(
      call_of({nt_group(0, 0, 64, 64, 3), nt_group(1, 100, 64, 64, 2), nt_group(2, 9, 64, 64, 0)}));
  ASSERT_FALSE(g.empty);
  EXPECT_TRUE(g.one_layout);
  EXPECT_EQ(g.problem.layout(), "NT");
  EXPECT_EQ(g.problem.m, 112);        // 100 up to a multiple of 128 / 8
  EXPECT_EQ(g.problem.batch, 5);      // every group's problems
  EXPECT_FALSE(g.problem.beta_zero);  // group 1 has beta 1; the others have no work
  GroupedGemmCall zero = call_of({nt_group(0, 4, 4, 4, 1)});
  EXPECT_TRUE(grouped_problem(zero).problem.beta_zero);
}

TEST(GroupedCall, groups_of_different_layouts_with_work_are_not_one_layout) {
  GroupedGemmCall call = call_of({nt_group(0, 8, 8, 8, 1), nt_group(1, 8, 8, 8, 1)});
  call.groups[1].op_a = Op::T;
  call.groups[1].lda = 8;
  EXPECT_FALSE(grouped_problem(call).one_layout);
  call.groups[1].size = 0;  // without work its layout is never run
  EXPECT_TRUE(grouped_problem(call).one_layout);
}

TEST(GroupedCall, nothing_to_compute_is_empty_and_needs_no_arrays) {
  GroupedGemmCall call =
      call_of({nt_group(0, 0, 8, 8, 2), nt_group(1, 8, 0, 8, 1), nt_group(2, 8, 8, 8, 0)});
  call.a = call.b = nullptr;
  call.c = nullptr;
  EXPECT_TRUE(grouped_problem(call).empty);
  EXPECT_TRUE(grouped_problem(call_of({})).empty);
  // K = 0 still writes C (beta C): work.
  EXPECT_FALSE(grouped_problem(call_of({nt_group(0, 8, 8, 0, 1)})).empty);
}

TEST(GroupedCall, rejects_negative_sizes_and_group_sizes_naming_the_group) {
  EXPECT_HAS(check_message(call_of({nt_group(0, 8, 8, 8, 1), nt_group(1, -1, 8, 8, 1)})),
             "group 1: m, n and k must be >= 0 (got m=-1, n=8, k=8)");
  EXPECT_HAS(check_message(call_of({nt_group(0, 8, 8, 8, -2)})), "group_size[0] = -2 is negative");
}

TEST(GroupedCall, rejects_leading_dimensions_below_their_row_length_naming_the_group) {
  GroupedGemmCall call = call_of({nt_group(0, 8, 16, 32, 1), nt_group(1, 8, 16, 32, 1)});
  call.groups[1].lda = 31;  // A is m x k (N)
  EXPECT_HAS(check_message(call), "group 1: lda = 31 is smaller than the row length of A (32)");
  call.groups[1].lda = 32;
  call.groups[1].ldb = 31;  // B is n x k (T)
  EXPECT_HAS(check_message(call), "group 1: ldb = 31 is smaller than the row length of B (32)");
  call.groups[1].ldb = 32;
  call.groups[0].ldc = 15;
  EXPECT_HAS(check_message(call), "group 0: ldc = 15 is smaller than the row length of C (16)");
  // cuBLAS's rule: at least 1 even for an empty row, and checked for groups without work.
  call = call_of({nt_group(0, 0, 0, 0, 0)});
  call.groups[0].ldc = 0;
  EXPECT_HAS(check_message(call), "ldc = 0 is smaller than the row length of C (0)");
}

TEST(GroupedCall, rejects_null_pointer_arrays_where_a_group_has_work) {
  GroupedGemmCall call = call_of({nt_group(0, 8, 8, 8, 1)});
  call.c = nullptr;
  EXPECT_HAS(check_message(call), "Carray is a null pointer");
  call = call_of({nt_group(0, 8, 8, 8, 1)});
  call.b = nullptr;
  EXPECT_HAS(check_message(call), "Aarray or Barray is a null pointer");
}

TEST(GroupedCall, rejects_more_problems_than_an_int_indexes) {
  EXPECT_HAS(check_message(call_of({nt_group(0, 8, 8, 8, INT32_MAX), nt_group(1, 8, 8, 8, 1)})),
             "the groups hold 2147483648 problems");
}

TEST(GroupedCall, types_no_gemm_computes_are_type_errors) {
  GroupedGemmCall call = call_of({nt_group(0, 8, 8, 8, 1)});
  call.types.c = DType::e4m3;
  EXPECT_THROW(grouped_problem(call), TypeNotSupportedError);
}

// Every launch of a call, read through GroupedLaunches.
struct Launch {
  GroupedGemmParams params;
  unsigned tiles;
};
std::vector<Launch> launches_of(const GroupedGemmCall& call, int tile_m, int tile_n) {
  GroupedLaunches launches(call, tile_m, tile_n);
  std::vector<Launch> out;
  Launch next{};
  while (launches.next(&next.params, &next.tiles)) out.push_back(next);
  return out;
}

TEST(GroupedLaunches, one_launch_numbers_every_tile_group_by_group_skipping_empty_groups) {
  const GroupedGemmCall call =
      call_of({nt_group(0, 100, 130, 64, 2), nt_group(1, 0, 64, 64, 5), nt_group(2, 1, 7, 64, 3)});
  const std::vector<Launch> launches = launches_of(call, 64, 128);
  ASSERT_EQ(launches.size(), 1u);
  const GroupedGemmParams& p = launches[0].params;
  ASSERT_EQ(p.groups, 2);
  // Group 0: 2 x 2 tiles per problem, two problems; group 2: one tile per problem.
  EXPECT_EQ(p.group[0].tiles_m, 2);
  EXPECT_EQ(p.group[0].tiles_n, 2);
  EXPECT_EQ(p.group[0].first_tile, 0);
  EXPECT_EQ(p.group[0].first_problem, 0);
  EXPECT_EQ(p.group[1].first_tile, 8);
  EXPECT_EQ(p.group[1].first_problem, 7);  // past group 1's five problems without work
  EXPECT_EQ(p.group[1].m, 1);
  EXPECT_EQ(p.group[1].n, 7);
  EXPECT_EQ(p.group[1].k, 64);
  EXPECT_EQ(p.group[1].ldc, 7);
  EXPECT_EQ(p.group[1].alpha, 3.0f);
  EXPECT_EQ(p.group[1].beta, 2.0f);
  EXPECT_EQ(launches[0].tiles, 11u);
  EXPECT_EQ(p.gemm.lda, 64);
  EXPECT_EQ(p.gemm.a, call.a);
  EXPECT_EQ(p.gemm.c, call.c);
}

TEST(GroupedLaunches, a_change_of_lda_or_ldb_opens_a_launch) {
  GroupedGemmCall call =
      call_of({nt_group(0, 8, 8, 64, 1), nt_group(1, 8, 8, 32, 1), nt_group(2, 8, 8, 32, 1)});
  const std::vector<Launch> launches = launches_of(call, 16, 16);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].params.groups, 1);
  EXPECT_EQ(launches[0].params.gemm.lda, 64);
  EXPECT_EQ(launches[1].params.groups, 2);
  EXPECT_EQ(launches[1].params.gemm.ldb, 32);
  EXPECT_EQ(launches[1].params.group[0].first_problem, 1);
  EXPECT_EQ(launches[1].params.group[0].first_tile, 0);  // each launch numbers its own tiles
}

TEST(GroupedLaunches, past_64_groups_the_next_launch_goes_on) {
  std::vector<CallGroup> groups;
  for (int g = 0; g < kMaxLaunchGroups + 6; ++g) groups.push_back(nt_group(g, 1 + g, 8, 8, 1));
  const std::vector<Launch> launches = launches_of(call_of(groups), 128, 64);  // a tile each
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].params.groups, kMaxLaunchGroups);
  EXPECT_EQ(launches[1].params.groups, 6);
  EXPECT_EQ(launches[1].params.group[0].first_problem, kMaxLaunchGroups);
  EXPECT_EQ(launches[1].params.group[0].m, kMaxLaunchGroups + 1);
  EXPECT_EQ(launches[1].tiles, 6u);
}

TEST(GroupedLaunches, a_group_past_2_to_the_31_tiles_goes_on_in_the_next_launch) {
  // 2e6 x 2e6 problems of 64 x 64 tiles: 31250^2 = 976562500 tiles each, two per launch.
  const std::vector<Launch> launches =
      launches_of(call_of({nt_group(0, 2000000, 2000000, 8, 3)}), 64, 64);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].tiles, 2u * 976562500u);
  EXPECT_EQ(launches[1].tiles, 976562500u);
  EXPECT_EQ(launches[1].params.group[0].first_problem, 2);
}

TEST(GroupedFamilies, gemm_mma_serves_a_grouped_gemm_in_one_plain_launch_of_its_tile) {
  const GemmTemplate& mma = template_named("gemm_mma");
  const Problem p = Problem::grouped(f16(), Op::N, Op::T, {{100, 256, 64, 3}, {7, 256, 64, 1}});
  const KernelConfig shift = testing::mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}});
  ASSERT_FALSE(mma.unsupported_reason(shift, p, "sm_80"));
  const LaunchPlan plan = mma.plan_launch(shift, p);
  ASSERT_EQ(plan.count, 1);
  EXPECT_EQ(plan.group_tile_m, 128);
  EXPECT_EQ(plan.group_tile_n, 128);
  // The pointers' alignment is one element: 16-byte copies need SHIFT_COPY.
  EXPECT_HAS(*mma.unsupported_reason(testing::mma_config({}), p, "sm_80"), "VEC_BYTES=16");
  EXPECT_HAS(*mma.unsupported_reason(testing::mma_config({{"PACK", 1}}), p, "sm_80"), "pre-pass");
  EXPECT_TRUE(mma.unsupported_reason(
      testing::mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}, {"SPLIT_K", 2}}),
      Problem::grouped(parse_gemm_types("f16_out_f32"), Op::N, Op::T, {{100, 256, 64, 3}}),
      "sm_80"));
}

TEST(GroupedFamilies, families_without_a_grouped_build_refuse_with_their_name) {
  const Problem p = Problem::grouped(GemmTypes{}, Op::N, Op::N, {{64, 64, 64, 2}});
  const auto why = template_named("sgemm_simt")
                       .unsupported_reason(testing::sgemm_config({{"VEC", 1}}), p, "sm_80");
  ASSERT_TRUE(why);
  EXPECT_HAS(*why, "sgemm_simt has no grouped build");
}

TEST(GroupedBuilds, a_grouped_build_is_a_variant_of_its_own_with_batch_form_3) {
  const GemmTemplate& mma = template_named("gemm_mma");
  const Problem p = Problem::grouped(f16(), Op::N, Op::T, {{100, 256, 64, 3}});
  const Problem other = Problem::grouped(f16(), Op::N, Op::T, {{1, 8, 8, 70}, {5, 5, 5, 1}});
  EXPECT_EQ(build_variant(p).key(), build_variant(other).key());
  EXPECT_EQ(build_variant(p).batch_form(), BatchForm::grouped);
  Problem arrays = Problem::packed(f16(), Op::N, Op::T, 100, 256, 64);
  arrays.batch_pointers = true;
  EXPECT_NE(build_variant(p).key(), build_variant(arrays).key());
  const std::vector<std::string> defines = mma.defines(testing::mma_config({}), build_variant(p));
  EXPECT_NE(std::find(defines.begin(), defines.end(), "-DTGEMM_BATCH=3"), defines.end());
  CompiledKernel built;
  built.types = f16();
  built.op_a = Op::N;
  built.op_b = Op::T;
  built.batch_form = BatchForm::grouped;
  EXPECT_EQ(built_variant(built).key(), build_variant(p).key());
}

// Untuned, the shipped defaults serve a grouped 16-bit call with gemm_mma's shifted 16-byte
// copies (the one line that reads element-aligned A and B); f16 in, f32 out has no such line.
TEST(GroupedSelection, the_shipped_defaults_serve_a_grouped_f16_call_on_sm_80) {
  const KernelSelector selector({}, shipped_default_kernels(), "sm_80", 108);
  const Problem p =
      Problem::grouped(f16(), Op::N, Op::T, {{600, 4096, 4096, 1}, {200, 4096, 4096, 7}});
  const KernelChoice choice = selector.choose(p);
  ASSERT_NE(choice.path, Selection::cublas) << choice.rule;
  EXPECT_EQ(choice.config.template_name, "gemm_mma");
  EXPECT_EQ(choice.config.get("SHIFT_COPY"), 1);
  const Problem wide_out =
      Problem::grouped(parse_gemm_types("f16_out_f32"), Op::N, Op::T, {{600, 4096, 4096, 1}});
  EXPECT_EQ(selector.choose(wide_out).path, Selection::cublas);
}

}  // namespace
}  // namespace tgemm
