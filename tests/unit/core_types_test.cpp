// Problem, KernelConfig, arch limits and launch planning: the value types every module shares.
#include <gtest/gtest.h>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "src/launch/launch_plan.h"
#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

KernelConfig config_128() {
  return {"sgemm_simt",
          {{"BM", 128},
           {"BN", 64},
           {"BK", 8},
           {"TM", 8},
           {"TN", 4},
           {"WARP_N", 8},
           {"VEC", 4},
           {"PAD_A", 4},
           {"PAD_B", 0},
           {"STAGES", 2},
           {"SPLIT_K", 4},
           {"SWIZZLE", 1}}};
}

TEST(Problem, packed_sets_leading_dimensions_and_alignment_per_layout) {
  auto p = Problem::packed(GemmTypes{}, Op::T, Op::N, 127, 256, 64);
  EXPECT_EQ(p.lda, 127);  // A stored k x m
  EXPECT_EQ(p.ldb, 256);
  EXPECT_EQ(p.ldc, 256);
  EXPECT_EQ(p.align_a, 4);  // bytes: 127 floats a row
  EXPECT_EQ(p.align_b, 16);
  EXPECT_EQ(p.layout(), "TN");
  EXPECT_EQ(p.key(), "f32_TN_m127_n256_k64_b0_a4.16.16");
}

TEST(Problem, validate_rejects_bad_dimensions_and_leading_dimensions) {
  auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 8, 8, 8);
  EXPECT_NO_THROW(p.validate());
  auto zero = p;
  zero.m = 0;
  EXPECT_THROW(zero.validate(), Error);
  auto small = p;
  small.lda = 7;
  try {
    small.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lda = 7"), std::string::npos);
  }
  auto huge = p;
  huge.k = int64_t(1) << 40;
  huge.lda = huge.k;
  EXPECT_THROW(huge.validate(), Error);
}

TEST(Problem, alignment_in_bytes_needs_both_ld_and_address) {
  EXPECT_EQ(alignment_bytes(1024, 0, 4), 16);
  EXPECT_EQ(alignment_bytes(1024, 4, 4), 4);  // pointer one float past 16 bytes
  EXPECT_EQ(alignment_bytes(1024, 8, 4), 8);
  EXPECT_EQ(alignment_bytes(1023, 0, 4), 4);
  EXPECT_EQ(alignment_bytes(1022, 0, 4), 8);
  // f16: 16-byte alignment is 8 elements, which elements of 4 could not express.
  EXPECT_EQ(alignment_bytes(4096, 0, 2), 16);
  EXPECT_EQ(alignment_bytes(4100, 0, 2), 8);
  EXPECT_EQ(alignment_bytes(4097, 0, 2), 2);
  EXPECT_EQ(alignment_bytes(4096, 2, 2), 2);
}

TEST(Problem, keys_split_into_functional_and_preference_parts) {
  auto p = Problem::packed(gemm_types("f16", "f32"), Op::N, Op::T, 16, 4096, 4097);
  EXPECT_EQ(p.functional_key(), "f16_out_f32_NT_m16_n4096_k4097_b0");
  EXPECT_EQ(p.key(), "f16_out_f32_NT_m16_n4096_k4097_b0_a2.2.16");
  auto q = p;
  q.align_a = 16;
  EXPECT_EQ(q.functional_key(), p.functional_key());
  EXPECT_NE(q.key(), p.key());
  EXPECT_EQ(Problem::packed(GemmTypes{}, Op::N, Op::N, 8, 8, 8).key(),
            "f32_NN_m8_n8_k8_b0_a16.16.16");
}

TEST(GemmTypes, names_round_trip_and_invalid_combinations_are_refused) {
  for (const char* name : {"f32", "tf32", "f32x3", "f16", "bf16", "f16_out_f32", "bf16_out_f32"})
    EXPECT_EQ(parse_gemm_types(name).name(), name);
  EXPECT_EQ(gemm_types("bf16", "f32").c, DType::f32);
  EXPECT_EQ(gemm_types("f16", "f16").name(), "f16");
  EXPECT_THROW(gemm_types("f64"), Error);
  EXPECT_THROW(gemm_types("f16", "bf16"), Error);
  EXPECT_THROW(gemm_types("tf32", "f16"), Error);
  GemmTypes mixed = gemm_types("f16");
  mixed.b = DType::bf16;
  EXPECT_NE(mixed.invalid_reason(), "");
  GemmTypes tf16 = gemm_types("f16");
  tf16.compute = ComputeType::tf32;
  EXPECT_NE(tf16.invalid_reason(), "");
  EXPECT_EQ(GemmTypes{}.invalid_reason(), "");
  auto p = Problem::packed(mixed, Op::N, Op::N, 4, 4, 4);
  EXPECT_THROW(p.validate(), Error);
}

// FP8: either format for A and B, C bf16 (the default), f16 or f32, named in full; every name
// of every_gemm_types round-trips; FP8 mixed with another type, FP8 into FP8 and FP8 with a
// TF32 compute type are refused.
TEST(GemmTypes, fp8_pairs_take_bf16_f16_or_f32_outputs_and_nothing_else) {
  const GemmTypes e4m3 = gemm_types("e4m3");
  EXPECT_EQ(e4m3.a, DType::e4m3);
  EXPECT_EQ(e4m3.b, DType::e4m3);
  EXPECT_EQ(e4m3.c, DType::bf16);
  EXPECT_EQ(e4m3.name(), "e4m3_out_bf16");
  const GemmTypes mixed = gemm_types("e4m3_e5m2", "f32");
  EXPECT_EQ(mixed.b, DType::e5m2);
  EXPECT_EQ(mixed.name(), "e4m3_e5m2_out_f32");
  EXPECT_EQ(element_bytes(DType::e5m2), 1);
  size_t fp8 = 0;
  for (const GemmTypes& t : every_gemm_types()) {
    EXPECT_EQ(t.invalid_reason(), "") << t.name();
    EXPECT_EQ(parse_gemm_types(t.name()), t) << t.name();
    fp8 += t.fp8() ? 1 : 0;
  }
  EXPECT_EQ(fp8, 12u) << "two formats for A, two for B, three outputs";
  EXPECT_THROW(gemm_types("e4m3", "e4m3"), Error);
  EXPECT_THROW(gemm_types("e4m3_f16"), Error);
  EXPECT_THROW(gemm_types("e4m3_e5m2_e4m3"), Error);
  GemmTypes with_f16 = e4m3;
  with_f16.b = DType::f16;
  EXPECT_NE(with_f16.invalid_reason().find("both be FP8"), std::string::npos);
  GemmTypes into_fp8 = e4m3;
  into_fp8.c = DType::e4m3;
  EXPECT_NE(into_fp8.invalid_reason(), "");
  GemmTypes tf32 = e4m3;
  tf32.compute = ComputeType::tf32;
  EXPECT_NE(tf32.invalid_reason(), "");
  const Problem p = Problem::packed(e4m3, Op::N, Op::T, 16, 4096, 4095);
  EXPECT_EQ(p.key(), "e4m3_out_bf16_NT_m16_n4096_k4095_b0_a1.1.16")
      << "one-byte rows of 4095 align to one byte";
}

TEST(DType, parses_known_and_rejects_unknown_names) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_THROW(parse_dtype("f64"), Error);
  Op a, b;
  parse_layout("TN", &a, &b);
  EXPECT_EQ(a, Op::T);
  EXPECT_EQ(b, Op::N);
  EXPECT_THROW(parse_layout("NX", &a, &b), Error);
  EXPECT_THROW(parse_layout("N", &a, &b), Error);
}

// A parameter the host side divides by is an error below 1, naming it, never a division by 0.
TEST(KernelConfig, divisor_refuses_a_value_below_one_naming_it) {
  const KernelConfig c{"sgemm_warp", {{"WM", 0}, {"WN", 32}}};
  EXPECT_EQ(c.divisor("WN"), 32);
  try {
    c.divisor("WM");
    ADD_FAILURE() << "WM=0 accepted as a divisor";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WM=0 must be at least 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.divisor("BM"), Error);  // absent
}

TEST(KernelConfig, canonical_name_and_params_text_round_trip) {
  auto c = config_128();
  EXPECT_EQ(c.canonical_name(),
            "sgemm_simt_bm128_bn64_bk8_tm8_tn4_warp_n8_vec4_pad_a4_pad_b0_stages2_split_k4_"
            "swizzle1");
  auto back = KernelConfig::from_params_text("sgemm_simt", c.params_text());
  EXPECT_EQ(back, c);
  EXPECT_EQ(c.defines().front(), "-DBM=128");
  EXPECT_THROW(KernelConfig::from_params_text("sgemm_simt", "BM=12x"), Error);
  EXPECT_THROW(KernelConfig::from_params_text("sgemm_simt", "=3"), Error);
  EXPECT_THROW(c.get("NOPE"), Error);
}

TEST(ArchLimits, knows_the_claimed_archs_and_rejects_others) {
  for (auto arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"})
    EXPECT_GT(arch_limits(arch).smem_per_block_optin, 48 * 1024) << arch;
  EXPECT_EQ(arch_limits("sm_90").smem_per_block_optin, 227 * 1024);
  try {
    arch_limits("sm_61");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sm_61"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos);
  }
  EXPECT_EQ(arch_number("sm_89"), 89);
  EXPECT_THROW(arch_number("sm_"), Error);
  EXPECT_THROW(arch_number("compute_90"), Error);
}

TEST(TrialStatus, text_round_trips) {
  for (auto s : {TrialStatus::ok, TrialStatus::crashed, TrialStatus::timeout,
                 TrialStatus::wrong_result, TrialStatus::resource_exceeded})
    EXPECT_EQ(parse_trial_status(to_string(s)), s);
  EXPECT_THROW(parse_trial_status("fine"), Error);
}

TEST(LaunchPlan, grid_covers_the_problem_and_split_k_prepares_c) {
  const GemmTemplate& family = template_named("sgemm_simt");
  auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 257, 132, 1000);
  auto plan = family.plan_launch(config_128(), p);
  ASSERT_EQ(plan.count, 2);  // C = beta * C, then the split-K main kernel
  EXPECT_EQ(plan.launches[0].entry, 1);
  EXPECT_EQ(family.entries(config_128())[1], "sgemm_simt_prepare_c");
  const KernelLaunch& main = plan.launches[1];
  EXPECT_EQ(main.entry, 0);
  EXPECT_EQ(main.grid[0], 3u);  // ceil(132 / 64)
  EXPECT_EQ(main.grid[1], 3u);  // ceil(257 / 128)
  EXPECT_EQ(main.grid[2], 4u);
  EXPECT_EQ(main.block[0], 256u);
  EXPECT_EQ(main.smem_bytes, size_t(2 * 8 * (132 + 64) * 4));
  auto single = config_128();
  single.set("SPLIT_K", 1);
  EXPECT_EQ(family.plan_launch(single, p).count, 1);
}

TEST(LaunchPlan, vector_width_needs_operand_alignment) {
  const GemmTemplate& family = template_named("sgemm_simt");
  auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 63);  // lda = 63
  auto why = family.unsupported_reason(config_128(), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("VEC=4"), std::string::npos);
  auto c1 = config_128();
  c1.set("VEC", 1);
  EXPECT_EQ(family.unsupported_reason(c1, p, "sm_90"), std::nullopt);
  auto f16 = Problem::packed(gemm_types("f16"), Op::N, Op::N, 64, 64, 64);
  EXPECT_TRUE(family.unsupported_reason(c1, f16, "sm_90"));
}

TEST(LaunchPlan, params_carry_c_alignment_for_vector_stores) {
  auto p = Problem::packed(GemmTypes{}, Op::N, Op::N, 4, 8, 4);
  EXPECT_EQ(make_params(p, nullptr, nullptr, nullptr, 1, 0).c_aligned16, 1);
  p.align_c = 8;
  EXPECT_EQ(make_params(p, nullptr, nullptr, nullptr, 1, 0).c_aligned16, 0);
}

TEST(LaunchPlan, holds_a_fixed_number_of_launches) {
  LaunchPlan plan;
  for (int i = 0; i < LaunchPlan::kMaxLaunches; ++i) plan.add({});
  EXPECT_THROW(plan.add({}), Error);
}

// The first launch follows the caller's work, so it may never start early.
TEST(LaunchPlan, only_a_later_launch_may_start_early) {
  KernelLaunch early;
  early.early = true;
  LaunchPlan plan;
  EXPECT_THROW(plan.add(early), Error);
  plan.add({});
  plan.add(early);
  EXPECT_EQ(plan.count, 2);
}

// Every gemm_wgmma launch after the first starts early: the second pack beside the first
// (each pack waits for the grid before it at its end), the main launch after the packs or
// the beta pass (its kernel waits for them first).
TEST(LaunchPlan, wgmma_launches_after_the_first_start_early) {
  const GemmTemplate& family = template_named("gemm_wgmma");
  const GemmTypes tf32{DType::f32, DType::f32, DType::f32, ComputeType::tf32};
  const Problem nn = Problem::packed(tf32, Op::N, Op::N, 1023, 1023, 1023);
  const Problem nt = Problem::packed(tf32, Op::N, Op::T, 1024, 1024, 1024);
  KernelConfig config{"gemm_wgmma",
                      {{"BM", 128},
                       {"BN", 128},
                       {"WGS", 2},
                       {"STAGES", 4},
                       {"SWIZZLE", 8},
                       {"PACK", 0},
                       {"SPLIT_K", 1}}};
  const LaunchPlan packed = family.plan_launch(config, nn);  // both operands packed
  ASSERT_EQ(packed.count, 3);
  EXPECT_FALSE(packed.launches[0].early);
  EXPECT_TRUE(packed.launches[1].early);  // pack B beside pack A
  EXPECT_TRUE(packed.launches[2].early);
  config.set("PACK", 2);  // NT: both K-major, read in place
  const LaunchPlan alone = family.plan_launch(config, nt);
  ASSERT_EQ(alone.count, 1);
  EXPECT_FALSE(alone.launches[0].early);
  config.set("SPLIT_K", 4);
  const LaunchPlan split = family.plan_launch(config, nt);
  ASSERT_EQ(split.count, 2);  // the beta pass, then the main launch
  EXPECT_FALSE(split.launches[0].early);
  EXPECT_TRUE(split.launches[1].early);
  config.set("PACK", 0);  // NN split: the beta pass, both packs, the main launch
  const LaunchPlan split_packed = family.plan_launch(config, nn);
  ASSERT_EQ(split_packed.count, 4);
  EXPECT_FALSE(split_packed.launches[0].early);
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(split_packed.launches[i].early) << "launch " << i;
}

}  // namespace
}  // namespace tgemm
