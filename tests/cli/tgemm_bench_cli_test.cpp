// tgemm-bench and tgemm-dispatch-bench on bad input: clear messages and exit code 1.
#include <gtest/gtest.h>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::run_tool;
using testing::TempDir;

TEST(BenchCli, shapes_file_problems_are_named) {
  TempDir dir("bench_cli");
  auto missing = run_tool("tgemm-bench", "--shapes " + dir.file("nope.yaml"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("nope.yaml"), std::string::npos) << missing.output;
  auto bad = dir.write("zero.yaml", "shapes:\n  - [8, 0, 8]\n");
  auto zero = run_tool("tgemm-bench", "--shapes " + bad);
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.output.find("zero.yaml"), std::string::npos) << zero.output;
  auto usage = run_tool("tgemm-bench", "--db x.db");
  EXPECT_NE(usage.exit_code, 0);
  EXPECT_NE(usage.output.find("--shapes"), std::string::npos) << usage.output;
  auto level = run_tool("tgemm-bench",
                        "--shapes " TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml --log-level loud");
  EXPECT_NE(level.exit_code, 0);
  EXPECT_NE(level.output.find("--log-level"), std::string::npos) << level.output;
}

TEST(BenchCli, untuned_needs_a_database_that_opens) {
  TempDir dir("bench_cli_untuned");
  const std::string shapes = "--shapes " TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml";
  auto missing = run_tool("tgemm-bench", shapes + " --untuned --db " + dir.file("none.db"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("--untuned needs a tuning database"), std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("does not exist"), std::string::npos) << missing.output;
  const std::string junk = dir.write("junk.db", "not a database at all, just text\n");
  auto corrupt = run_tool("tgemm-bench", shapes + " --untuned --db " + junk);
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_NE(corrupt.output.find("--untuned needs a tuning database"), std::string::npos)
      << corrupt.output;
  EXPECT_EQ(testing::read_bytes(junk), "not a database at all, just text\n");  // untouched
}

TEST(BenchCli, without_a_gpu_both_benches_say_so) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  auto bench = run_tool("tgemm-bench", "--shapes " TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml");
  EXPECT_EQ(bench.exit_code, 1);
  EXPECT_NE(bench.output.find("no CUDA driver/device"), std::string::npos) << bench.output;
  auto overhead = run_tool("tgemm-dispatch-bench", "");
  EXPECT_EQ(overhead.exit_code, 1);
  EXPECT_NE(overhead.output.find("no CUDA driver/device"), std::string::npos) << overhead.output;
}

}  // namespace
}  // namespace tgemm
