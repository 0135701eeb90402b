// Output a tool could not write is a failure, not a success: with standard output on a full
// disk (/dev/full) every tool says so on standard error and exits non-zero. And a question the
// database cannot answer (a device it does not hold) exits 3, as `best` and `show` do.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.h"
#include "tests/common/temp_dir.h"

namespace tgemm {
namespace {

using testing::run_tool;
using testing::run_tool_with_stdout;
using testing::TempDir;

class LostOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                                "/benchmarks/h200/fp32.db.gz' > '" + db_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  void expect_reported(const std::string& tool, const std::string& args) {
    const testing::CliResult r = run_tool_with_stdout(tool, args, "/dev/full");
    EXPECT_NE(r.exit_code, 0) << tool << " " << args << "\n" << r.output;
    EXPECT_NE(r.output.find("standard output"), std::string::npos) << tool << " " << args << "\n"
                                                                   << r.output;
  }
  TempDir dir_{"lost_output"};
  std::string db_ = dir_.file("s25.db");
};

TEST_F(LostOutput, every_db_subcommand_fails_when_its_output_is_lost) {
  const std::string shape = " --m 256 --n 256 --k 256";
  const std::vector<std::string> commands = {"stale",        "ceilings",           "list",
                                             "profiles",     "explain" + shape,    "best" + shape,
                                             "show" + shape, "export --format csv"};
  for (const std::string& args : commands) expect_reported("tgemm-db", "--db " + db_ + " " + args);
}

TEST_F(LostOutput, tune_fails_when_its_output_is_lost) {
  expect_reported("tgemm-tune",
                  std::string("--compile-only --arch sm_75 --shapes ") + TGEMM_SOURCE_DIR +
                      "/configs/shapes/quick.yaml --budget 1 --db " + dir_.file("tuned.db"));
}

TEST_F(LostOutput, explain_of_an_unknown_device_exits_3_like_best_and_show) {
  const std::string args = " --m 256 --n 256 --k 256 --device nosuch --db " + db_;
  for (const char* command : {"best", "show", "explain"}) {
    const testing::CliResult r = run_tool("tgemm-db", command + args);
    EXPECT_EQ(r.exit_code, 3) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("nosuch"), std::string::npos) << command << "\n" << r.output;
  }
}

}  // namespace
}  // namespace tgemm
