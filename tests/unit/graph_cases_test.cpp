// The CUDA graph tests' cases (tests/common/graph_cases.h) are problems their families compute
// on sm_90, and together they cover every kind of launch plan a captured call must replay:
// several launches, a workspace, counters in the module, tensor maps, a persistent grid,
// misaligned operands; and every registered family has one.
#include "tests/common/graph_cases.h"

#include <gtest/gtest.h>

#include <set>

#include "src/templates/template_registry.h"

namespace tgemm {
namespace {

TEST(GraphCases, every_case_runs_on_sm_90_and_the_plans_cover_every_kind) {
  std::set<std::string> families;
  bool workspace = false, module_state = false, tensor_maps = false, persistent = false;
  bool several_launches = false, misaligned = false;
  for (const testing::GraphCase& c : testing::graph_cases()) {
    const DefaultKernel kernel = c.kernel();
    for (bool beta_zero : {true, false}) {
      const Problem p = c.problem(beta_zero);
      SCOPED_TRACE(c.line + " on " + p.key());
      const GemmTemplate& family = template_named(kernel.config.template_name);
      const auto why = family.unsupported_reason(kernel.config, p, "sm_90");
      ASSERT_FALSE(why) << *why;
      const LaunchPlan plan = family.plan_launch(kernel.config, p, 132);
      workspace |= plan.workspace_bytes > 0;
      module_state |= plan.module_state;
      tensor_maps |= plan.uses_tensor_maps();
      several_launches |= plan.count > 1;
      for (const KernelLaunch& l : plan) persistent |= l.persistent;
      misaligned |= p.align_a < 16;
    }
    families.insert(kernel.config.template_name);
  }
  EXPECT_TRUE(workspace);
  EXPECT_TRUE(module_state);
  EXPECT_TRUE(tensor_maps);
  EXPECT_TRUE(persistent);
  EXPECT_TRUE(several_launches);
  EXPECT_TRUE(misaligned);
  // Every registered family has its case (a new family needs one).
  std::set<std::string> registered;
  for (const GemmTemplate* family : all_templates()) registered.insert(family->name());
  EXPECT_EQ(families, registered);
}

}  // namespace
}  // namespace tgemm
