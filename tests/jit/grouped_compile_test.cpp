// Grouped builds on the CPU: every shipped default that serves a grouped GEMM compiles for each
// arch it runs on without spills or a stack frame (the table is read where it lies, in parameter
// space), and the PTX shows the grouped path: the whole table as the kernel's parameter, read by
// computed addresses, and the block's tile found from blockIdx.x alone.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernel_templates/common/group_table.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/mma_configs.h"
#include "tests/common/template_ptx.h"

namespace tgemm {
namespace {

// Ragged groups: several tiles, one row, and an odd K.
Problem grouped(const GemmTypes& types) {
  return Problem::grouped(types, Op::N, Op::T, {{100, 256, 64, 3}, {1, 256, 64, 1}, {7, 9, 33, 2}});
}

class GroupedCompiles : public ::testing::TestWithParam<const char*> {};

TEST_P(GroupedCompiles, every_default_serving_a_grouped_gemm_compiles_clean) {
  const std::string arch = GetParam();
  std::set<std::string> served;  // types a default serves grouped
  for (const DefaultKernel& d : shipped_default_kernels()) {
    if (d.arch != "*" && d.arch != arch) continue;
    const GemmTemplate& family = template_named(d.config.template_name);
    const Problem p = grouped(d.types);
    if (family.unsupported_reason(d.config, p, arch)) continue;
    served.insert(d.types.name());
    const std::string what = d.config.canonical_name() + " " + d.types.name() + " " + arch;
    const CompiledKernel k = build_kernel(family, d.config, build_variant(p), arch);
    ASSERT_TRUE(k.ok) << what << "\n" << k.error;
    ASSERT_TRUE(k.resources.found) << what << "\n" << k.log;
    EXPECT_EQ(k.batch_form, BatchForm::grouped) << what;
    EXPECT_EQ(k.resources.stack_frame_bytes, 0) << what << "\n" << k.log;
    EXPECT_EQ(k.resources.spill_store_bytes, 0) << what << "\n" << k.log;
    EXPECT_EQ(k.resources.spill_load_bytes, 0) << what;
  }
  // The defaults that read element-aligned operands: 16-bit inputs through shifted 16-byte
  // copies, f32 through 4-byte copies, and sm_75's 2-byte copies of f16 (into f16 or f32).
  const std::set<std::string> expected =
      arch == "sm_75" ? std::set<std::string>{"f16", "f16_out_f32"}
                      : std::set<std::string>{"f16", "bf16", "tf32", "f32x3"};
  EXPECT_EQ(served, expected) << arch;
}

INSTANTIATE_TEST_SUITE_P(Archs, GroupedCompiles, ::testing::Values("sm_75", "sm_80", "sm_90"));

TEST(GroupedBuilds, the_ptx_reads_the_table_in_parameter_space_and_tiles_along_x_only) {
  const GemmTemplate& family = template_named("gemm_mma");
  const KernelConfig config = testing::mma_config({{"STAGES", 2}, {"SHIFT_COPY", 1}});
  const GemmTypes f16 = parse_gemm_types("f16");
  for (const char* arch : {"compute_80", "compute_90"}) {
    SCOPED_TRACE(arch);
    const std::string ptx =
        testing::template_ptx(family, config, build_variant(grouped(f16)), arch);
    const std::string plain = testing::template_ptx(
        family, config, build_variant(Problem::packed(f16, Op::N, Op::T, 1, 1, 1)), arch);
    EXPECT_NE(plain.find("gemm_mma_param_0[80]"), std::string::npos);
    EXPECT_NE(ptx.find(fmt::format("gemm_mma_param_0[{}]", sizeof(GroupedGemmParams))),
              std::string::npos);
    // The parameter's address taken: the block's entry is read at a computed offset.
    EXPECT_NE(ptx.find("gemm_mma_param_0;"), std::string::npos);
    EXPECT_EQ(ptx.find(".local"), std::string::npos) << "the table was copied to the stack";
    // One problem's grid uses y for its tile rows; a grouped launch numbers tiles along x.
    EXPECT_NE(plain.find("%ctaid.y"), std::string::npos);
    EXPECT_EQ(ptx.find("%ctaid.y"), std::string::npos);
    EXPECT_EQ(ptx.find("%ctaid.z"), std::string::npos);
  }
}

}  // namespace
}  // namespace tgemm
