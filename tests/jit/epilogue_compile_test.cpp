// Fused epilogues on the CPU: every family that applies one compiles it for each arch it runs on
// without spills (one shipped default per family and types, and the split-K and stream-K
// endings that apply it after the last slice), and a plain build keeps its one parameter and
// its code while an epilogue's build takes the epilogue as a second parameter.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "src/core/arch_limits.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/nvrtc_compiler.h"
#include "src/templates/epilogue_pass.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/template_ptx.h"
#include "tests/common/tma_configs.h"

namespace tgemm {
namespace {

Problem with_epilogue(Problem p, const std::string& name) {
  p.epilogue = parse_epilogue_name(name);
  return p;
}

// `config` built for `problem`'s variant on `arch`: ok, resources read, no spills.
void expect_clean_build(const GemmTemplate& family, const KernelConfig& config,
                        const Problem& problem, const std::string& arch) {
  const std::string what = config.canonical_name() + " " + problem.key() + " " + arch;
  ASSERT_FALSE(family.unsupported_reason(config, problem, arch)) << what;
  const CompiledKernel k = build_kernel(family, config, build_variant(problem), arch);
  ASSERT_TRUE(k.ok) << what << "\n" << k.error;
  ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
  EXPECT_EQ(k.epilogue, problem.epilogue.build()) << what;
  EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
  EXPECT_EQ(k.resources.spill_load_bytes, 0) << what;
}

class EpilogueCompiles : public ::testing::TestWithParam<const char*> {};

// One shipped default of each family and types that serves an epilogue on the arch, with the
// heaviest epilogues: bias + GELU keeping aux, and bias along M + SiLU (f32 bias for 16-bit C).
TEST_P(EpilogueCompiles, a_default_of_every_family_applying_it_compiles_clean) {
  const std::string arch = GetParam();
  std::set<std::string> built, families;
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.arch != "*" && d.arch != arch) continue;
    if (d.types.compute == ComputeType::f32x3) continue;  // at the 255-register ceiling already
    const GemmTemplate& family = template_named(d.config.template_name);
    const Problem plain = Problem::packed(d.types, Op::N, Op::T, 256, 256, 256);
    const std::string silu = d.types.c == DType::f32 ? "bias_silu.m" : "bias_silu.m.bf32";
    if (family.unsupported_reason(d.config, with_epilogue(plain, "bias_gelu.aux"), arch)) continue;
    if (!built.insert(family.name() + d.types.name()).second) continue;
    families.insert(family.name());
    for (const std::string& e : {std::string("bias_gelu.aux"), silu})
      expect_clean_build(family, d.config, with_epilogue(plain, e), arch);
  }
  EXPECT_TRUE(families.count("sgemm_simt") || families.count("sgemm_warp"))
      << "no FFMA default applies an epilogue on " << arch;
  if (arch_number(arch) >= 80) {
    EXPECT_TRUE(families.count("gemm_mma") || families.count("gemm_wgmma") ||
                families.count("gemm_tma_wgmma"))
        << "no tensor-core default applies an epilogue on " << arch;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, EpilogueCompiles, ::testing::Values("sm_75", "sm_80", "sm_90"));

// The endings that cut K apply the activation once, in the part that sees the whole sum: the
// deterministic split's reduction, the stream tail's last slice, the TMA family's reduction.
TEST(EpilogueCompiles, split_and_stream_k_endings_compile_clean) {
  const Problem f32 = Problem::packed(GemmTypes{}, Op::N, Op::T, 256, 256, 4096);
  expect_clean_build(template_named("sgemm_simt"),
                     testing::sgemm_config({{"SPLIT_K", 4}, {"SPLIT_MODE", 1}}),
                     with_epilogue(f32, "bias_gelu_erf.aux"), "sm_80");
  expect_clean_build(
      template_named("sgemm_warp"),
      KernelConfig::from_params_text(
          "sgemm_warp",
          "BM=128,BN=128,BK=8,WM=64,WN=32,TM=8,TN=8,STAGES=3,VEC=4,SPLIT_K=1,SWIZZLE=1,"
          "MIN_BLOCKS=1,PACK_B=0,TAIL_SPLIT=2"),
      with_epilogue(f32, "bias_relu.m.aux"), "sm_80");
  const Problem bf16 = Problem::packed(parse_gemm_types("bf16"), Op::N, Op::T, 256, 256, 4096);
  expect_clean_build(template_named("gemm_tma_wgmma"), testing::tma_config(128, 128, 2, 4, 8, 2),
                     with_epilogue(bf16, "bias_gelu.bf32.aux"), "sm_90");
  expect_clean_build(template_named("gemm_naive"),
                     KernelConfig::from_params_text("gemm_naive", "BLOCK_X=32,BLOCK_Y=8"),
                     with_epilogue(bf16, "silu"), "sm_75");
}

// A plain build declares the one block it had (and no epilogue code); an epilogue's build
// declares the 48-byte EpilogueParams as its second parameter, and its reduction too.
TEST(EpilogueBuilds, only_an_epilogues_build_declares_the_second_parameter) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const KernelConfig config = testing::sgemm_config({{"SPLIT_K", 2}, {"SPLIT_MODE", 1}});
  const Problem plain = Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1);
  const auto ptx = [&](const Problem& p) {
    return testing::template_ptx(family, config, build_variant(p), "compute_80");
  };
  const std::string single = ptx(plain);
  EXPECT_NE(single.find("sgemm_simt_param_0[80]"), std::string::npos);
  EXPECT_EQ(single.find("sgemm_simt_param_1"), std::string::npos);
  EXPECT_EQ(single.find("tanh"), std::string::npos);
  const std::string fused = ptx(with_epilogue(plain, "bias_gelu"));
  EXPECT_NE(fused.find("sgemm_simt_param_0[80]"), std::string::npos);
  EXPECT_NE(fused.find("sgemm_simt_param_1[64]"), std::string::npos);
  EXPECT_NE(fused.find("sgemm_simt_reduce_param_1[64]"), std::string::npos);
}

// The pass after cuBLAS (the fallback) builds for every output and bias type, and the
// reference (an f32 output) for every bias a 16-bit C may have.
TEST(EpiloguePass, builds_for_every_output_and_bias_type) {
  const std::pair<DType, DType> builds[] = {{DType::f32, DType::f32},  {DType::f16, DType::f16},
                                            {DType::f16, DType::f32},  {DType::bf16, DType::bf16},
                                            {DType::bf16, DType::f32}, {DType::f32, DType::f16},
                                            {DType::f32, DType::bf16}};
  for (const auto& [out, bias] : builds) {
    const KernelSource source =
        kernel_source_from_text("epilogue_pass", "#include \"common/epilogue_pass.cuh\"\n");
    const CompiledKernel k = NvrtcCompiler::compile(
        source, EpiloguePass::defines(parse_epilogue_name("bias_gelu_erf.m.aux"), out, bias),
        "epilogue_pass", "sm_75", "epilogue_pass");
    EXPECT_TRUE(k.ok) << to_string(out) << " " << to_string(bias) << "\n" << k.error;
  }
}

}  // namespace
}  // namespace tgemm
