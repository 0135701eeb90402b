// Batched builds on the CPU: every shipped default kernel that serves a batch compiles, in both
// batch forms, for each arch it runs on (one cubin serves every batch size: the member comes
// from blockIdx.z and the parameter block, never built in).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "src/core/arch_limits.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/template_ptx.h"

namespace tgemm {
namespace {

class BatchCompiles : public ::testing::TestWithParam<const char*> {};

// A batch's builds (strided, and pointer arrays: TGEMM_BATCH=1 and 2) of every shipped default
// that serves one on the arch compile; the strided ones without spills.
TEST_P(BatchCompiles, every_default_serving_a_batch_compiles_in_both_forms) {
  const std::string arch = GetParam();
  std::set<std::string> families;
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.arch != "*" && d.arch != arch) continue;
    const GemmTemplate& family = template_named(d.config.template_name);
    Problem strided = Problem::packed_batch(d.types, Op::N, Op::T, 256, 256, 64, 16);
    if (family.unsupported_reason(d.config, strided, arch)) continue;
    families.insert(family.name());
    Problem arrays = Problem::packed(d.types, Op::N, Op::T, 256, 256, 64);
    arrays.batch = 16;
    arrays.batch_pointers = true;
    for (const Problem& batch : {strided, arrays}) {
      const std::string what = d.config.canonical_name() + " " + d.types.name() + " " + arch +
                               (batch.batch_pointers ? " pointer arrays" : " strided");
      const CompiledKernel k = build_kernel(family, d.config, build_variant(batch), arch);
      ASSERT_TRUE(k.ok) << what << "\n" << k.error;
      ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
      EXPECT_EQ(k.batch_form, batch.batch_form()) << what;
      // Spills are checked where a config has registers to spare: f32x3's lines run at the
      // 255-register ceiling, and pointer arrays hold pointers loaded from memory (sm_75's
      // two-stage f16 line spills 8 bytes with them); the tuner prunes builds that spill.
      if (batch.batch_pointers || d.types.compute == ComputeType::f32x3) continue;
      EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
      EXPECT_EQ(k.resources.spill_load_bytes, 0) << what;
    }
  }
  EXPECT_TRUE(families.count("sgemm_simt")) << "no default serves an f32 batch on " << arch;
  EXPECT_TRUE(families.count("gemm_mma") || families.count("gemm_wgmma"))
      << "no tensor-core default serves an f16 batch on " << arch;
}

INSTANTIATE_TEST_SUITE_P(Archs, BatchCompiles, ::testing::Values("sm_75", "sm_80", "sm_90"));

// A single GEMM's build declares the 80-byte block it had before batches (so its machine code
// and a tuned trial's code hash stay as they were); a batch's build declares the whole block.
TEST(BatchBuilds, only_a_batchs_build_declares_the_batch_fields) {
  const GemmTemplate& family = template_named("sgemm_simt");
  const KernelConfig config = testing::sgemm_config({});
  const auto ptx = [&](const Problem& p) {
    return testing::template_ptx(family, config, build_variant(p), "compute_80");
  };
  const std::string single = ptx(Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1));
  const std::string strided = ptx(Problem::packed_batch(GemmTypes{}, Op::N, Op::N, 1, 1, 1, 4));
  EXPECT_NE(single.find("sgemm_simt_param_0[80]"), std::string::npos);
  EXPECT_NE(strided.find("sgemm_simt_param_0[112]"), std::string::npos);
  EXPECT_NE(strided.find("%ctaid.z"), std::string::npos);  // the member
}

}  // namespace
}  // namespace tgemm
