// Fused epilogues without a GPU: their names and key, the checks of bad epilogues, the builds
// they add (plain builds keep their defines), the families that apply one and those that refuse
// with a reason, and their rows in the tuning database.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/epilogue.h"
#include "src/core/error.h"
#include "src/core/problem.h"
#include "src/dispatch/problem_recorder.h"
#include "src/launch/launch_plan.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/gemv_configs.h"
#include "tests/common/mma_configs.h"
#include "tests/common/one_best_database.h"
#include "tests/common/result_databases.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

Epilogue bias_gelu() { return parse_epilogue_kind("bias_gelu"); }

// The message `f` throws, or "".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Problem with_epilogue(Problem p, const Epilogue& e) {
  p.epilogue = e;
  return p;
}

TEST(EpilogueNames, every_kind_parses_and_names_itself) {
  for (const char* kind : {"bias", "relu", "bias_relu", "gelu", "bias_gelu", "gelu_erf",
                           "bias_gelu_erf", "silu", "bias_silu"}) {
    const Epilogue e = parse_epilogue_kind(kind);
    EXPECT_EQ(e.kind(), kind);
    EXPECT_EQ(e.name(), kind);
    EXPECT_EQ(parse_epilogue_name(e.name()), e);
  }
  const Epilogue e = bias_gelu();
  EXPECT_EQ(e.activation, Activation::gelu);
  EXPECT_EQ(e.bias, BiasAlong::n);  // a bias runs along N unless said otherwise
  EXPECT_EQ(parse_epilogue_kind("none"), Epilogue{});
}

TEST(EpilogueNames, the_name_carries_every_choice_and_round_trips) {
  Epilogue e = bias_gelu();
  e.bias = BiasAlong::m;
  e.bias_f32 = true;
  e.aux = true;
  e.separate_d = true;
  EXPECT_EQ(e.name(), "bias_gelu.m.bf32.aux.d");
  EXPECT_EQ(parse_epilogue_name(e.name()), e);
  Epilogue d_only;
  d_only.separate_d = true;
  EXPECT_EQ(d_only.name(), "none.d");
  EXPECT_EQ(parse_epilogue_name("none.d"), d_only);
  EXPECT_EQ(parse_epilogue_name(""), Epilogue{});
}

// FP8's rowwise scales are keyed (another problem, served by cuBLASLt with another scale mode)
// and built apart (TGEMM_ROWWISE_SCALES), so the per-tensor builds keep their code.
TEST(EpilogueNames, rowwise_scales_are_keyed_and_refused_for_types_that_are_not_fp8) {
  Epilogue rowwise;
  rowwise.rowwise_scales = true;
  EXPECT_TRUE(rowwise.any());
  EXPECT_FALSE(rowwise.fused());
  EXPECT_EQ(rowwise.name(), "none.rowwise");
  EXPECT_EQ(parse_epilogue_name("none.rowwise"), rowwise);
  Epilogue both = bias_gelu();
  both.rowwise_scales = true;
  EXPECT_EQ(both.name(), "bias_gelu.rowwise");
  EXPECT_EQ(parse_epilogue_name(both.name()), both);
  EXPECT_EQ(both.build(), both);
  EXPECT_EQ(rowwise.defines(), std::vector<std::string>{"-DTGEMM_ROWWISE_SCALES=1"});
  EXPECT_EQ(both.defines().size(), bias_gelu().defines().size() + 1);
  EXPECT_EQ(rowwise.invalid_reason(parse_gemm_types("e4m3")), "");
  EXPECT_HAS(rowwise.invalid_reason(parse_gemm_types("bf16")), "rowwise scales scale FP8 inputs");
  const Problem fp8 = Problem::packed(parse_gemm_types("e4m3"), Op::N, Op::T, 64, 64, 64);
  EXPECT_EQ(with_epilogue(fp8, rowwise).functional_key(), fp8.functional_key() + "_enone.rowwise");
  EXPECT_NE(build_variant(with_epilogue(fp8, rowwise)).key(), build_variant(fp8).key());
}

TEST(EpilogueNames, rejects_unknown_kinds_and_parts_naming_them) {
  EXPECT_HAS(error_of([] { parse_epilogue_kind("gelu_bias"); }), "unknown epilogue 'gelu_bias'");
  EXPECT_HAS(error_of([] { parse_epilogue_kind("gelu_bias"); }), "bias_gelu");  // the list
  EXPECT_HAS(error_of([] { parse_epilogue_kind("bias_none"); }), "unknown epilogue");
  EXPECT_HAS(error_of([] { parse_epilogue_name("relu.x"); }), "unknown part '.x'");
  EXPECT_HAS(error_of([] { parse_epilogue_name("relu.m"); }), ".m (a bias along M) without");
  EXPECT_HAS(error_of([] { parse_epilogue_name("relu.aux.aux"); }), "unknown part '.aux'");
  EXPECT_HAS(error_of([] { parse_epilogue_name("none"); }), "plain GEMM's");
  EXPECT_HAS(error_of([] { parse_epilogue_name("relu.rowwise.d"); }), "unknown part '.d'");
}

TEST(EpilogueProblem, a_plain_gemm_keeps_its_key_and_an_epilogue_ends_it) {
  const Problem plain = Problem::packed(parse_gemm_types("bf16"), Op::N, Op::T, 16, 4096, 4096);
  EXPECT_EQ(plain.functional_key(), "bf16_NT_m16_n4096_k4096_b0");
  const Problem fused = with_epilogue(plain, bias_gelu());
  EXPECT_EQ(fused.functional_key(), "bf16_NT_m16_n4096_k4096_b0_ebias_gelu");
  EXPECT_NE(fused.key(), plain.key());
  // The bias is read and counted in the bytes a GEMM must move.
  EXPECT_DOUBLE_EQ(fused.min_bytes() - plain.min_bytes(), 4096.0 * 2);
}

TEST(EpilogueProblem, rejects_aux_without_an_activation_and_misplaced_f32_biases) {
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 8, 8, 8);
  Epilogue aux = parse_epilogue_kind("bias");
  aux.aux = true;
  EXPECT_HAS(error_of([&] { with_epilogue(p, aux).validate(); }), "aux keeps the values");
  Epilogue f32_bias = bias_gelu();
  f32_bias.bias_f32 = true;
  EXPECT_HAS(error_of([&] { with_epilogue(p, f32_bias).validate(); }), "an f32 C");
  Epilogue no_bias = parse_epilogue_kind("relu");
  no_bias.bias_f32 = true;
  p.types = parse_gemm_types("f16");
  EXPECT_HAS(error_of([&] { with_epilogue(p, no_bias).validate(); }), "without a bias");
  EXPECT_EQ(error_of([&] { with_epilogue(p, f32_bias).validate(); }), "");  // f16 C: fine
}

TEST(EpilogueProblem, rejects_an_epilogue_on_a_batch) {
  const Problem p =
      with_epilogue(Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 8, 8, 8, 4), bias_gelu());
  EXPECT_HAS(error_of([&] { p.validate(); }), "an epilogue applies to one GEMM");
}

TEST(EpilogueBuilds, a_plain_build_keeps_its_defines_and_an_epilogue_adds_its_own) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const KernelConfig config = testing::sgemm_config({});
  const Problem plain = Problem::packed(GemmTypes{}, Op::N, Op::T, 64, 64, 64);
  const std::vector<std::string> single = family.defines(config, build_variant(plain));
  for (const std::string& d : single) EXPECT_EQ(d.find("EPILOGUE"), std::string::npos) << d;
  Epilogue e = bias_gelu();
  e.bias = BiasAlong::m;
  e.aux = true;
  const std::vector<std::string> fused =
      family.defines(config, build_variant(with_epilogue(plain, e)));
  for (const char* d :
       {"-DTGEMM_EPILOGUE=1", "-DTGEMM_ACTIVATION=2", "-DTGEMM_BIAS=2", "-DTGEMM_AUX=1"})
    EXPECT_TRUE(std::find(fused.begin(), fused.end(), d) != fused.end()) << d;
  EXPECT_EQ(fused.size(), single.size() + 4);
}

TEST(EpilogueBuilds, a_d_apart_shares_the_build_of_its_math_unless_it_is_all_there_is) {
  const Problem plain = Problem::packed(GemmTypes{}, Op::N, Op::T, 64, 64, 64);
  Epilogue apart = bias_gelu();
  apart.separate_d = true;
  EXPECT_EQ(build_variant(with_epilogue(plain, apart)).key(),
            build_variant(with_epilogue(plain, bias_gelu())).key());
  Epilogue d_only;
  d_only.separate_d = true;
  EXPECT_NE(build_variant(with_epilogue(plain, d_only)).key(), build_variant(plain).key());
  EXPECT_EQ(d_only.build().defines().front(), "-DTGEMM_EPILOGUE=1");
}

TEST(EpilogueBuilds, a_compiled_kernel_names_the_variant_it_was_built_for) {
  const Problem fused = with_epilogue(
      Problem::packed(parse_gemm_types("bf16"), Op::T, Op::N, 64, 64, 64), bias_gelu());
  const CompiledKernel k =
      build_kernel(template_named("gemm_naive"),
                   KernelConfig::from_params_text("gemm_naive", "BLOCK_X=32,BLOCK_Y=8"),
                   build_variant(fused), "sm_80");
  ASSERT_TRUE(k.ok) << k.error;
  EXPECT_EQ(built_variant(k).key(), build_variant(fused).key());
}

TEST(EpilogueFamilies, the_shared_epilogues_families_serve_it) {
  const Problem f32 =
      with_epilogue(Problem::packed(GemmTypes{}, Op::N, Op::T, 256, 256, 256), bias_gelu());
  EXPECT_FALSE(
      template_named("sgemm_simt").unsupported_reason(testing::sgemm_config({}), f32, "sm_80"));
  const Problem f16 = with_epilogue(
      Problem::packed(parse_gemm_types("f16"), Op::N, Op::T, 256, 256, 256), bias_gelu());
  EXPECT_FALSE(
      template_named("gemm_mma").unsupported_reason(testing::mma_config({}), f16, "sm_80"));
}

TEST(EpilogueFamilies, atomic_split_k_refuses_and_the_deterministic_split_serves) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const Problem p =
      with_epilogue(Problem::packed(GemmTypes{}, Op::N, Op::N, 64, 64, 4096), bias_gelu());
  const auto atomic =
      family.unsupported_reason(testing::sgemm_config({{"SPLIT_K", 4}}), p, "sm_80");
  ASSERT_TRUE(atomic);
  EXPECT_HAS(*atomic, "SPLIT_K=4 adds its slices atomically");
  EXPECT_FALSE(family.unsupported_reason(testing::sgemm_config({{"SPLIT_K", 4}, {"SPLIT_MODE", 1}}),
                                         p, "sm_80"));
  const Problem f32_mma = with_epilogue(
      Problem::packed(parse_gemm_types("tf32"), Op::N, Op::T, 64, 64, 4096), bias_gelu());
  EXPECT_TRUE(template_named("gemm_mma")
                  .unsupported_reason(testing::mma_config({{"SPLIT_K", 2}}), f32_mma, "sm_80"));
}

TEST(EpilogueFamilies, families_without_the_shared_epilogue_refuse_with_their_name) {
  const Problem p =
      with_epilogue(Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 4096, 4096), bias_gelu());
  const auto why = template_named("gemv_simt")
                       .unsupported_reason(testing::gemv_config(0, 8, 4, 8, 256, 1, 0), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_HAS(*why, "gemv_simt writes C without the shared epilogue");
}

TEST(EpilogueParams, d_defaults_to_c_and_alignment_is_read_from_the_pointers) {
  GemmCall call;
  call.m = call.n = 8;
  call.c = reinterpret_cast<void*>(uintptr_t(256));
  call.ldc = 8;
  EpilogueParams e = make_epilogue_params(call);
  EXPECT_EQ(e.d, call.c);
  EXPECT_EQ(e.ldd, 8);
  EXPECT_EQ(e.d_aligned16, 1);
  EXPECT_EQ(e.aux_aligned16, 0);  // no aux
  call.d = reinterpret_cast<void*>(uintptr_t(260));
  call.ldd = 9;
  e = make_epilogue_params(call);
  EXPECT_EQ(e.d, call.d);
  EXPECT_EQ(e.ldd, 9);
  EXPECT_EQ(e.d_aligned16, 0);
}

// Record mode writes what a shape file reads back: the epilogue tuned into C.
TEST(EpilogueRecord, a_recorded_shape_names_its_epilogue) {
  Epilogue e = parse_epilogue_kind("bias_silu");
  e.bias = BiasAlong::m;
  e.bias_f32 = true;
  e.separate_d = true;
  const Problem p =
      with_epilogue(Problem::packed(parse_gemm_types("f16"), Op::N, Op::T, 8, 16, 32), e);
  EXPECT_EQ(shape_entry(p),
            "{m: 8, n: 16, k: 32, dtype: f16, layout: NT, epilogue: bias_silu, bias_along: m, "
            "bias_type: f32");
}

TEST(EpilogueDatabase, schema_version_11_adds_the_epilogue) {
  EXPECT_GE(TuningDb::schema_version(), 11);
}

TEST(EpilogueDatabase, an_epilogue_problem_is_stored_and_read_back_beside_the_plain_one) {
  testing::TempDir dir;
  const std::string path = dir.file("tgemm.db");
  const Problem plain = Problem::packed(parse_gemm_types("bf16"), Op::N, Op::T, 16, 64, 64);
  Epilogue e = bias_gelu();
  e.aux = true;
  const Problem fused = with_epilogue(plain, e);
  testing::write_one_best(path, fused, testing::mma_config({}));
  TuningDb db(path, TuningDb::Mode::read_only);
  const std::vector<BestEntry> bests = db.best_entries(fused.key());
  ASSERT_EQ(bests.size(), 1u);
  EXPECT_EQ(bests[0].problem.key(), fused.key());
  EXPECT_EQ(bests[0].problem.epilogue, e);
  EXPECT_TRUE(db.best_entries(plain.key()).empty());
}

TEST(EpilogueDatabase, a_file_made_before_epilogues_reads_with_none) {
  testing::TempDir dir;
  TuningDb db(testing::unpack_tuned_database(dir), TuningDb::Mode::read_only);  // migrated copy
  const std::vector<BestEntry> bests = db.best_entries();
  ASSERT_FALSE(bests.empty());
  for (const BestEntry& b : bests) EXPECT_FALSE(b.problem.epilogue.any()) << b.problem.key();
}

}  // namespace
}  // namespace tgemm
