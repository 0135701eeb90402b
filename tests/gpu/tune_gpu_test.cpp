// tgemm-tune end to end on a GPU: a config whose kernel faults is recorded `crashed` while
// the run finishes with the good config as the best, and the same command run again
// measures nothing twice. Skips cleanly without a GPU.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

TEST(TuneGpu, faulting_kernel_is_crashed_and_a_rerun_measures_nothing) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("tune_gpu");
  const std::string db = dir.file("t.db");
  const std::string args = std::string("--shapes ") + TGEMM_SOURCE_DIR +
                           "/tests/data/shapes/tiny.yaml --space " + TGEMM_SOURCE_DIR +
                           "/tests/data/spaces/fault_sgemm_simt.yaml --strategy exhaustive "
                           "--budget 0 --timeout 20 --db " +
                           db;
  auto first = run_tool("tgemm-tune", args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(query_int(db, "select count(*) from trials where status = 'crashed'"), 2)
      << first.output;
  EXPECT_EQ(query_int(db, "select count(*) from trials where status = 'ok'"), 2) << first.output;
  EXPECT_EQ(query_int(db, "select count(*) from best_kernels where kernel like '%tgemm_fault0'"),
            2);
  EXPECT_NE(first.output.find("worker restarts: 2"), std::string::npos) << first.output;

  auto second = run_tool("tgemm-tune", args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("trials: 0 run, 4 already recorded"), std::string::npos)
      << second.output;
  EXPECT_EQ(query_int(db, "select count(*) from trials"), 4);
}

}  // namespace
}  // namespace tgemm
