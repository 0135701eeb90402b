// tgemm-tune end to end on a GPU: a config whose kernel faults is recorded `crashed` while
// the run finishes with the good config as the best, and the same command run again
// measures nothing twice. Skips cleanly without a GPU.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "src/core/device_info.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::run_tool;
using testing::TempDir;

int64_t count(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

TEST(TuneGpu, faulting_kernel_is_crashed_and_a_rerun_measures_nothing) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("tune_gpu");
  const std::string db = dir.file("t.db");
  const std::string args = std::string("--shapes ") + TGEMM_SOURCE_DIR +
                           "/tests/data/shapes/tiny.yaml --space " + TGEMM_SOURCE_DIR +
                           "/tests/data/spaces/fault_sgemm_simt.yaml --strategy exhaustive "
                           "--budget 0 --timeout 20 --db " + db;
  auto first = run_tool("tgemm-tune", args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(count(db, "select count(*) from trials where status = 'crashed'"), 2) << first.output;
  EXPECT_EQ(count(db, "select count(*) from trials where status = 'ok'"), 2) << first.output;
  EXPECT_EQ(count(db, "select count(*) from best_kernels where kernel like '%tgemm_fault0'"), 2);
  EXPECT_NE(first.output.find("worker restarts: 2"), std::string::npos) << first.output;

  auto second = run_tool("tgemm-tune", args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("trials: 0 run, 4 already recorded"), std::string::npos)
      << second.output;
  EXPECT_EQ(count(db, "select count(*) from trials"), 4);
}

}  // namespace
}  // namespace tgemm
