// Batched GEMM without a GPU: the problem's key and checks, the families that serve a batch on
// the grid and those that refuse it with a reason, and the parameter block a batch launches with.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/core/error.h"
#include "src/core/problem.h"
#include "src/launch/launch_plan.h"
#include "src/templates/template_registry.h"
#include "tests/common/gemv_configs.h"
#include "tests/common/mma_configs.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

GemmTypes f16() { return parse_gemm_types("f16"); }

KernelConfig warp_config(int64_t tail_split) {
  return KernelConfig::from_params_text(
      "sgemm_warp",
      "BM=128,BN=128,BK=8,WM=64,WN=64,TM=8,TN=8,STAGES=2,VEC=4,SPLIT_K=1,SWIZZLE=1,MIN_BLOCKS=1,"
      "PACK_B=0,TAIL_SPLIT=" +
          std::to_string(tail_split));
}

KernelConfig gemv_config() {
  return testing::gemv_config(/*side=*/0, /*rows=*/8, /*vec=*/4, /*warps=*/8, /*kb=*/256,
                              /*lw=*/1, /*split_mode=*/0);
}

// The message validate() throws, or "" when the problem is valid.
std::string invalid_because(const Problem& p) {
  try {
    p.validate();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(BatchProblem, a_batch_of_one_keeps_the_plain_gemms_key) {
  const Problem plain = Problem::packed(GemmTypes{}, Op::N, Op::T, 64, 32, 16);
  const Problem one = Problem::packed_batch(GemmTypes{}, Op::N, Op::T, 64, 32, 16, 1);
  EXPECT_EQ(one.key(), plain.key());
  EXPECT_EQ(plain.functional_key(), "f32_NT_m64_n32_k16_b0");
  EXPECT_EQ(one.stride_c, 0);
}

TEST(BatchProblem, the_batch_and_pointer_arrays_enter_the_key_after_k) {
  Problem p = Problem::packed_batch(f16(), Op::N, Op::T, 128, 128, 64, 8);
  EXPECT_EQ(p.functional_key(), "f16_NT_m128_n128_k64_x8_b0");
  p.batch_pointers = true;
  p.stride_a = p.stride_b = p.stride_c = 0;
  EXPECT_EQ(p.functional_key(), "f16_NT_m128_n128_k64_x8p_b0");
  EXPECT_EQ(invalid_because(p), "");
}

TEST(BatchProblem, packed_strides_are_one_member_each_and_scale_the_work) {
  const Problem p = Problem::packed_batch(GemmTypes{}, Op::T, Op::N, 5, 7, 3, 4);
  EXPECT_EQ(p.stride_a, 3 * 5);  // A stored k x m
  EXPECT_EQ(p.stride_b, 3 * 7);
  EXPECT_EQ(p.stride_c, 5 * 7);
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 5 * 7 * 3 * 4);
  EXPECT_DOUBLE_EQ(p.min_bytes(), 4.0 * (5 * 3 + 3 * 7 + 5 * 7) * 4);
  EXPECT_EQ(invalid_because(p), "");
}

TEST(BatchProblem, a_stride_aligns_each_member_as_the_leading_dimension_does) {
  // A is 3 x 8 f16: rows of 16 bytes, packed members 48 bytes apart: 16-byte aligned.
  Problem p = Problem::packed_batch(f16(), Op::N, Op::N, 3, 8, 8, 2);
  EXPECT_EQ(p.align_a, 16);
  // Members 28 elements (56 bytes) apart: member 1 starts 8-byte aligned only.
  p.stride_a = 28;
  p.set_alignment(0, 0, 0);
  EXPECT_EQ(p.align_a, 8);
  EXPECT_EQ(p.align_b, 16);
  EXPECT_EQ(alignment_bytes(8, 0, 2, 9), 2);
  EXPECT_EQ(alignment_bytes(8, 0, 2, 0), 16);  // stride 0: one shared operand
}

TEST(BatchProblem, rejects_a_batch_below_one_naming_it) {
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 4, 4, 4);
  p.batch = 0;
  EXPECT_HAS(invalid_because(p), "batch must be >= 1, got 0");
  p.batch = -3;
  EXPECT_HAS(invalid_because(p), "batch must be >= 1, got -3");
  p.batch = kMaxBatch + 1;
  EXPECT_HAS(invalid_because(p), "batch = 65536 is too large");
}

TEST(BatchProblem, rejects_a_stride_c_that_overlaps_members_of_c) {
  Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 4, 6, 4, 3);
  p.stride_c = 4 * 6 - 1;
  const std::string why = invalid_because(p);
  EXPECT_HAS(why, "stride_c = 23");
  EXPECT_HAS(why, "overlap");
  p.stride_c = 4 * 6;
  EXPECT_EQ(invalid_because(p), "");
  p.ldc = 8;  // rows of C now 8 apart: one member spans 3 * 8 + 6
  EXPECT_HAS(invalid_because(p), "smaller than one member of C (30 elements");
}

TEST(BatchProblem, a_shared_operand_has_stride_zero_but_never_a_negative_one) {
  Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 4, 4, 4, 3);
  p.stride_b = 0;  // one B for every member, as cuBLAS allows
  EXPECT_EQ(invalid_because(p), "");
  p.stride_a = -16;
  EXPECT_HAS(invalid_because(p), "stride_a must be >= 0, got -16");
}

TEST(BatchProblem, strides_of_a_single_gemm_or_of_pointer_arrays_are_refused) {
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 4, 4, 4);
  p.stride_c = 16;
  EXPECT_HAS(invalid_because(p), "stride_c = 16 given for batch 1");
  p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 4, 4, 4, 2);
  p.batch_pointers = true;
  EXPECT_HAS(invalid_because(p), "given for pointer arrays");
}

TEST(BatchFamilies, sgemm_simt_serves_a_batch_with_one_grid_layer_per_member) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const KernelConfig config = testing::sgemm_config({});
  const Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 100, 72, 64, 12);
  ASSERT_FALSE(family.unsupported_reason(config, p, "sm_80"));
  const LaunchPlan plan = family.plan_launch(config, p);
  ASSERT_EQ(plan.count, 1);
  EXPECT_EQ(plan.launches[0].grid[2], 12u);
  const LaunchPlan one =
      family.plan_launch(config, Problem::packed(GemmTypes{}, Op::N, Op::N, 100, 72, 64));
  EXPECT_EQ(one.launches[0].grid[2], 1u);
  EXPECT_EQ(one.launches[0].grid[0], plan.launches[0].grid[0]);
}

TEST(BatchFamilies, split_k_configs_refuse_a_batch_naming_why) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 64, 64, 4096, 4);
  for (int mode : {0, 1}) {
    const auto why = family.unsupported_reason(
        testing::sgemm_config({{"SPLIT_K", 4}, {"SPLIT_MODE", mode}}), p, "sm_80");
    ASSERT_TRUE(why) << "SPLIT_MODE=" << mode;
    EXPECT_HAS(*why, "split-K");
  }
  // The same configs still serve one GEMM.
  EXPECT_FALSE(family.unsupported_reason(testing::sgemm_config({{"SPLIT_K", 4}}),
                                         Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 4096),
                                         "sm_80"));
}

TEST(BatchFamilies, pointer_arrays_of_one_member_are_a_batch_too) {
  const GemmTemplate& family = template_named("sgemm_simt");
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 64);
  p.batch_pointers = true;
  EXPECT_TRUE(family.unsupported_reason(testing::sgemm_config({{"SPLIT_K", 2}}), p, "sm_80"));
  EXPECT_FALSE(family.unsupported_reason(testing::sgemm_config({}), p, "sm_80"));
}

TEST(BatchFamilies, families_that_compute_one_gemm_per_launch_refuse_with_their_name) {
  const Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 1, 4096, 4096, 8);
  const auto why = template_named("gemv_simt").unsupported_reason(gemv_config(), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_HAS(*why, "gemv_simt computes one GEMM per launch");
}

TEST(BatchFamilies, tensor_core_families_serve_f16_batches_without_split_or_pack) {
  const Problem p = Problem::packed_batch(f16(), Op::N, Op::T, 256, 256, 64, 16);
  const GemmTemplate& mma = template_named("gemm_mma");
  const KernelConfig plain = testing::mma_config({});
  ASSERT_FALSE(mma.unsupported_reason(plain, p, "sm_80"));
  EXPECT_EQ(mma.plan_launch(plain, p).launches[0].grid[2], 16u);
  EXPECT_TRUE(mma.unsupported_reason(testing::mma_config({{"PACK", 1}}), p, "sm_80"));
}

TEST(BatchFamilies, sgemm_warp_refuses_a_stream_tail_for_a_batch) {
  const auto why =
      template_named("sgemm_warp")
          .unsupported_reason(warp_config(2),
                              Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 256, 256, 256, 4),
                              "sm_90");
  ASSERT_TRUE(why);
  EXPECT_HAS(*why, "TAIL_SPLIT=2");
  EXPECT_FALSE(
      template_named("sgemm_warp")
          .unsupported_reason(warp_config(1),
                              Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 256, 256, 256, 4),
                              "sm_90"));
}

// One cubin serves every size; each batch form is a build of its own, and a single GEMM's build
// keeps exactly the defines it had before batches.
TEST(BatchBuilds, each_batch_form_is_a_variant_adding_one_define) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const KernelConfig config = testing::sgemm_config({});
  const Problem plain = Problem::packed(GemmTypes{}, Op::N, Op::T, 64, 64, 64);
  const Problem eight = Problem::packed_batch(GemmTypes{}, Op::N, Op::T, 64, 64, 64, 8);
  const Problem sixty_four = Problem::packed_batch(GemmTypes{}, Op::N, Op::T, 32, 16, 8, 64);
  Problem arrays = plain;
  arrays.batch = 8;
  arrays.batch_pointers = true;
  EXPECT_EQ(build_variant(eight).key(), build_variant(sixty_four).key());
  EXPECT_NE(build_variant(eight).key(), build_variant(plain).key());
  EXPECT_NE(build_variant(arrays).key(), build_variant(eight).key());
  EXPECT_EQ(build_variant(eight).batch_form(), BatchForm::strided);
  EXPECT_EQ(build_variant(arrays).batch_form(), BatchForm::pointers);
  const auto defines = [&](const Problem& p) { return family.defines(config, build_variant(p)); };
  const auto has = [](const std::vector<std::string>& all, const std::string& one) {
    return std::find(all.begin(), all.end(), one) != all.end();
  };
  const std::vector<std::string> single = defines(plain);
  for (const std::string& d : single) EXPECT_EQ(d.find("TGEMM_BATCH"), std::string::npos) << d;
  EXPECT_EQ(defines(eight).size(), single.size() + 1);
  EXPECT_TRUE(has(defines(eight), "-DTGEMM_BATCH=1"));
  EXPECT_TRUE(has(defines(arrays), "-DTGEMM_BATCH=2"));
}

TEST(BatchParams, a_strided_batch_launches_with_its_strides_and_count) {
  Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 8, 8, 8, 5);
  p.stride_a = 0;
  const GemmParams params = make_params(p, nullptr, nullptr, nullptr, 1, 0);
  EXPECT_EQ(params.batch, 5);
  EXPECT_EQ(params.stride_a, 0);
  EXPECT_EQ(params.stride_b, 64);
  EXPECT_EQ(params.stride_c, 64);
}

}  // namespace
}  // namespace tgemm
