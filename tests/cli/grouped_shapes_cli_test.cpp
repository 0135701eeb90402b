// Grouped shape files through the tools: tgemm-tune refuses a file holding a grouped shape,
// naming the file and the shape, and writes nothing; without a GPU tgemm-bench reads the shipped
// grouped set and stops at the device, as for any set.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::run_tool;
using testing::TempDir;

TEST(GroupedShapesCli, tgemm_tune_refuses_a_grouped_shape_and_writes_nothing) {
  TempDir dir("grouped_shapes_cli");
  const std::string db = dir.file("t.db");
  const std::string shapes = dir.write(
      "moe.yaml", "shapes:\n  - [64, 64, 64]\n  - {groups: [{m: 5, n: 64, k: 64}], name: moe}\n");
  const auto r = run_tool("tgemm-tune", "--compile-only --arch sm_80 --shapes " + shapes +
                                            " --db " + db + " --budget 2 --jobs 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("moe.yaml: shape moe is a grouped GEMM"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(GroupedShapesCli, tgemm_bench_reads_the_shipped_grouped_set_before_asking_for_a_gpu) {
  const auto r = run_tool("tgemm-bench", "--shapes " TGEMM_SOURCE_DIR
                                         "/configs/shapes/moe_grouped.yaml --db /nonexistent.db");
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU ran it";
  EXPECT_NE(r.output.find("no CUDA driver/device"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tgemm
