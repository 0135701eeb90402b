// gemm_mma without a GPU: its shipped defaults compile for every arch and type they claim,
// in every layout, without spills; sm_75's PTX has neither cp.async nor bf16/tf32 mma; the
// space and the host side refuse what an arch or a problem cannot run, with a reason.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <set>

#include "src/dispatch/kernel_selector.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/kernel_build.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/mma_configs.h"
#include "tests/common/template_ptx.h"
#include "tuner/compile/resource_check.h"

namespace tgemm {
namespace {

const char* kSpace = TGEMM_SOURCE_DIR "/configs/spaces/gemm_mma.yaml";

const GemmTemplate& mma() { return template_named("gemm_mma"); }

using testing::mma_config;

CompiledKernel compile(const KernelConfig& config, const GemmTypes& types, Op a, Op b,
                       const std::string& arch) {
  return build_kernel(mma(), config, Problem::packed(types, a, b, 1, 1, 1), arch);
}

void expect_compiles_clean(const KernelConfig& config, const GemmTypes& types, Op a, Op b,
                           const std::string& arch) {
  const std::string what = fmt::format("{} {} {}{} {}", config.canonical_name(), types.name(),
                                       to_string(a), to_string(b), arch);
  const CompiledKernel k = compile(config, types, a, b, arch);
  ASSERT_TRUE(k.ok) << what << "\n" << k.error;
  ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
  EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
  EXPECT_EQ(k.resources.spill_load_bytes, 0) << what;
  EXPECT_EQ(resource_violation(k, mma().block_resources(config), arch_limits(arch)), std::nullopt)
      << what;
}

// The PTX NVRTC makes of the template for a virtual arch ("compute_75").
std::string ptx_of(const KernelConfig& config, const GemmTypes& types, const std::string& arch) {
  return testing::template_ptx(mma(), config, Problem::packed(types, Op::T, Op::N, 1, 1, 1),
                               "compute_" + arch.substr(3));
}

bool contains(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

TEST(GemmMmaPtx, sm_75_build_has_no_cp_async_and_no_bf16_or_tf32_mma) {
  const std::string ptx = ptx_of(mma_config({{"STAGES", 2}}), gemm_types("f16"), "sm_75");
  ASSERT_FALSE(ptx.empty());
  EXPECT_TRUE(contains(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"));
  EXPECT_TRUE(contains(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
  EXPECT_FALSE(contains(ptx, "cp.async"));
  EXPECT_FALSE(contains(ptx, "bf16"));
  EXPECT_FALSE(contains(ptx, "tf32"));
  EXPECT_FALSE(contains(ptx, "m16n8k16"));
}

// The same words are there on sm_80, so the test above can see them.
TEST(GemmMmaPtx, sm_80_builds_use_cp_async_and_their_types_mma) {
  const std::string bf16 = ptx_of(mma_config(), gemm_types("bf16"), "sm_80");
  EXPECT_TRUE(contains(bf16, "cp.async.cg.shared.global"));
  EXPECT_TRUE(contains(bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  const std::string tf32 = ptx_of(mma_config({{"VEC_BYTES", 8}}), gemm_types("tf32"), "sm_80");
  EXPECT_TRUE(contains(tf32, "cp.async.ca.shared.global"));
  EXPECT_TRUE(contains(tf32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
  EXPECT_TRUE(contains(tf32, "cvt.rna.tf32.f32"));
}

// The family states its types (the shipped space leaves them to it).
TEST(GemmMmaSpace, refuses_bf16_tf32_and_f32x3_on_sm_75_with_a_readable_reason) {
  const SearchSpace space = SearchSpace::load(kSpace);
  for (const char* type : {"bf16", "tf32", "f32x3", "bf16_out_f32"}) {
    SCOPED_TRACE(type);
    EXPECT_FALSE(space.types_unsupported(parse_gemm_types(type), "sm_75"));
    const auto by_family = mma().types_unsupported(parse_gemm_types(type), "sm_75");
    ASSERT_TRUE(by_family);
    EXPECT_TRUE(contains(*by_family, "f16 tensor cores only")) << *by_family;
    EXPECT_TRUE(contains(*by_family, "sm_80")) << *by_family;
    EXPECT_FALSE(mma().types_unsupported(parse_gemm_types(type), "sm_80"));
  }
  EXPECT_FALSE(space.types_unsupported(gemm_types("f16"), "sm_75"));
  EXPECT_FALSE(mma().types_unsupported(gemm_types("f16", "f32"), "sm_75"));
}

// 64 K slices only on tiles of 64 to 128 rows and columns.
TEST(GemmMmaSpace, refuses_64_k_slices_outside_mid_size_tiles_with_its_reason) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const auto why =
      space.rejection(mma_config({{"SPLIT_K", 64}, {"BM", 256}}), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "64 K slices serve deep K on a few tiles of 64 to 128")) << *why;
  EXPECT_FALSE(space.rejection(mma_config({{"SPLIT_K", 64}}), arch_limits("sm_90"))) << "128x128";
}

TEST(GemmMmaSpace, refuses_cp_async_stages_on_sm_75_and_keeps_the_legal_set_small) {
  const SearchSpace space = SearchSpace::load(kSpace);
  const auto why = space.rejection(mma_config({{"STAGES", 3}}), arch_limits("sm_75"));
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "no cp.async")) << *why;
  EXPECT_FALSE(space.rejection(mma_config({{"STAGES", 3}}), arch_limits("sm_80")));
  for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
    const size_t legal = space.enumerate(arch_limits(arch)).legal.size();
    EXPECT_GT(legal, 100u) << arch;
    EXPECT_LT(legal, 60000u) << arch;  // enumerated in well under a second
  }
}

// SHIFT_COPY keeps 16-byte copies for operands aligned to one element only (odd leading
// dimensions), through the register-staged double buffer.
TEST(GemmMmaHost, shift_copy_runs_element_aligned_operands_with_stages_2_only) {
  Problem p = Problem::packed(gemm_types("f16"), Op::N, Op::N, 4097, 4097, 4097);
  p.align_a = p.align_b = 2;
  EXPECT_FALSE(
      mma().unsupported_reason(mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}}), p, "sm_90"));
  auto why = mma().unsupported_reason(mma_config({{"SHIFT_COPY", 1}}), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "SHIFT_COPY=1 loads 16-byte words into registers")) << *why;
  why = mma().unsupported_reason(mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}, {"VEC_BYTES", 8}}),
                                 p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "needs VEC_BYTES=16 and STAGES=2 (have 8 and 2)")) << *why;
  Problem f32 = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 4097, 4097, 4097);
  f32.align_a = f32.align_b = 4;
  EXPECT_FALSE(
      mma().unsupported_reason(mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}}), f32, "sm_90"));
  const SearchSpace space = SearchSpace::load(kSpace);
  EXPECT_FALSE(space.rejection(mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}, {"WN", 32}}),
                               arch_limits("sm_90")));
  why = space.rejection(mma_config({{"SHIFT_COPY", 1}}), arch_limits("sm_90"));
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "SHIFT_COPY=1")) << *why;
}

TEST(GemmMmaHost, refuses_misaligned_operands_narrow_f32_copies_and_split_k_into_16_bit_c) {
  Problem p = Problem::packed(gemm_types("f16"), Op::N, Op::N, 4097, 4097, 4097);
  p.align_a = p.align_b = 2;
  auto why = mma().unsupported_reason(mma_config(), p, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "VEC_BYTES=16 needs A and B aligned to 16 bytes (have 2 and 2)"))
      << *why;
  EXPECT_FALSE(mma().unsupported_reason(mma_config({{"VEC_BYTES", 2}, {"STAGES", 2}}), p, "sm_90"));
  const Problem f32 = Problem::packed(gemm_types("tf32"), Op::N, Op::N, 64, 64, 64);
  why = mma().unsupported_reason(mma_config({{"VEC_BYTES", 2}, {"STAGES", 2}}), f32, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "less than one f32 element")) << *why;
  const Problem f16 = Problem::packed(gemm_types("f16"), Op::N, Op::N, 64, 64, 64);
  why = mma().unsupported_reason(mma_config({{"SPLIT_K", 4}}), f16, "sm_90");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "C is f16")) << *why;
  EXPECT_FALSE(mma().unsupported_reason(
      mma_config({{"SPLIT_K", 4}}),
      Problem::packed(gemm_types("f16", "f32"), Op::N, Op::N, 64, 64, 64), "sm_90"));
  why = mma().unsupported_reason(mma_config(), f16, "sm_75");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "STAGES=3 needs cp.async")) << *why;
  EXPECT_TRUE(mma().types_unsupported(gemm_types("f32"), "sm_90"));
}

// The shipped gemm_mma defaults cover every type each arch computes, and each is legal
// there (CompilesForArch in nvrtc_compile_test.cpp builds every family's defaults).
class MmaDefaultsForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(MmaDefaultsForArch, cover_every_type_of_the_arch_with_legal_configs) {
  const std::string arch = GetParam();
  const SearchSpace space = SearchSpace::load(kSpace);
  std::set<std::string> types_seen;
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.config.template_name != "gemm_mma" || (d.arch != "*" && d.arch != arch)) continue;
    const Problem p = Problem::packed(d.types, Op::N, Op::N, 64, 64, 64);
    if (d.arch == "*" && mma().unsupported_reason(d.config, p, arch)) continue;  // not for arch
    types_seen.insert(d.types.name());
    EXPECT_EQ(space.rejection(d.config, arch_limits(arch)), std::nullopt)
        << d.config.canonical_name();
  }
  const std::set<std::string> want =
      arch == "sm_75" ? std::set<std::string>{"f16"}
                      : std::set<std::string>{"f16", "f16_out_f32", "bf16", "tf32", "f32x3"};
  for (const std::string& t : want) EXPECT_TRUE(types_seen.count(t)) << t << " on " << arch;
}

INSTANTIATE_TEST_SUITE_P(Archs, MmaDefaultsForArch, ::testing::Values("sm_75", "sm_80", "sm_90"));

// The first default of each type in all four layouts (transposed fragments, .trans ldmatrix).
TEST(GemmMmaCompile, each_type_builds_in_every_layout) {
  struct Case {
    const char* type;
    const char* arch;
    KernelConfig config;
  };
  const std::vector<Case> cases = {
      {"f16", "sm_75", mma_config({{"STAGES", 2}, {"WN", 32}})},
      {"f16", "sm_90", mma_config({{"BN", 256}})},
      {"bf16_out_f32", "sm_80", mma_config({{"SMEM_XOR", 0}, {"SPLIT_K", 4}})},
      {"tf32", "sm_90", mma_config({{"VEC_BYTES", 4}, {"WN", 32}})},
      {"f32x3", "sm_80", mma_config({{"WN", 32}, {"SMEM_XOR", 0}})},
      {"f16", "sm_80",
       mma_config(
           {{"BM", 64}, {"BN", 64}, {"WM", 32}, {"WN", 32}, {"VEC_BYTES", 2}, {"STAGES", 2}})},
      {"f16", "sm_75", mma_config({{"STAGES", 2}, {"WN", 32}, {"SHIFT_COPY", 1}})},
      {"bf16", "sm_90", mma_config({{"STAGES", 2}, {"WN", 32}, {"SHIFT_COPY", 1}})},
      {"tf32", "sm_80", mma_config({{"STAGES", 2}, {"WN", 32}, {"SHIFT_COPY", 1}})},
      {"f32x3", "sm_90", mma_config({{"STAGES", 2}, {"WN", 32}, {"SHIFT_COPY", 1}})},
  };
  for (const Case& c : cases)
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        expect_compiles_clean(c.config, parse_gemm_types(c.type), a, b, c.arch);
}

// The test space of a one-pass f32x3 kernel (for the evaluator's f32x3 rule) is legal, and
// its kernel is a different build from the shipped one.
TEST(GemmMmaCompile, one_pass_f32x3_test_space_builds_a_different_kernel) {
  const SearchSpace space =
      SearchSpace::load(TGEMM_SOURCE_DIR "/tests/data/spaces/gemm_mma_one_pass_f32x3.yaml");
  const auto legal = space.enumerate(arch_limits("sm_80")).legal;
  ASSERT_EQ(legal.size(), 1u);
  std::ifstream in(TGEMM_SOURCE_DIR
                   "/"
                   "tests/data/templates/gemm_mma_one_pass.cuh");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  auto one_pass = make_template("gemm_mma", kernel_source_from_text("gemm_mma", text));
  const Problem p = Problem::packed(gemm_types("f32x3"), Op::N, Op::N, 1, 1, 1);
  const CompiledKernel weak = build_kernel(*one_pass, legal[0], p, "sm_80");
  ASSERT_TRUE(weak.ok) << weak.error;
  const CompiledKernel full = build_kernel(mma(), legal[0], p, "sm_80");
  ASSERT_TRUE(full.ok) << full.error;
  EXPECT_LT(weak.cubin.size(), full.cubin.size());
}

}  // namespace
}  // namespace tgemm
