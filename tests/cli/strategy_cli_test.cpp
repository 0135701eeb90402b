// The strategy options as a user gives them: --budget as a count, a share or a time (bad
// values refused before anything runs), --strategy model and nearest in a compile-only run,
// and tgemm-simulate replaying a recorded database.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::run_tool;
using testing::TempDir;

const std::string kQuick = TGEMM_SOURCE_DIR "/configs/shapes/quick.yaml";
const std::string kSimtSpace = TGEMM_SOURCE_DIR "/configs/spaces/sgemm_simt.yaml";

class StrategyCli : public ::testing::Test {
 protected:
  TempDir dir_{"strategy_cli"};
  std::string db_ = dir_.file("t.db");
  std::string missing_shapes() const {
    return " --compile-only --shapes " + dir_.file("nope.yaml") + " --db " + db_;
  }
};

TEST_F(StrategyCli, rejects_negative_zero_time_and_unknown_unit_budgets) {
  for (const std::string budget : {"-1", "10x", "0s", "0%", "101%", "5d", "1e3s"}) {
    auto r = run_tool("tgemm-tune", "--budget '" + budget + "'" + missing_shapes());
    EXPECT_NE(r.exit_code, 0) << budget;
    EXPECT_NE(r.output.find("--budget"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("a time over 0 (e.g. 90s, 5m, 1h)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("'" + budget + "'"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("nope.yaml"), std::string::npos) << r.output;
  }
}

TEST_F(StrategyCli, accepts_a_share_and_a_time_budget) {
  // They pass the check, then fail on the missing file.
  for (const std::string budget : {"10%", "90s", "5m", "1.5h"}) {
    auto r = run_tool("tgemm-tune", "--budget " + budget + missing_shapes());
    EXPECT_EQ(r.exit_code, 1) << budget << r.output;
    EXPECT_NE(r.output.find("nope.yaml"), std::string::npos) << r.output;
  }
}

// The proven candidates (the defaults, the model's few picks per problem) are asked whatever
// the budget; a spent time budget asks nothing past them.
TEST_F(StrategyCli, a_spent_time_budget_asks_nothing_past_the_candidates_and_says_so) {
  auto r = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + kQuick + " --space " +
                                      kSimtSpace + " --db " + db_ +
                                      " --strategy model --budget 0.001s --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t at = r.output.find(" proven candidate(s) first");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string count =
      r.output.substr(r.output.rfind(' ', at - 1) + 1, at - r.output.rfind(' ', at - 1) - 1);
  EXPECT_GT(std::stoi(count), 0) << r.output;
  EXPECT_NE(r.output.find("configs: " + count + " asked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ran out after 0 config(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("time budget 0.001 s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 of 1 family run(s) stopped by it"), std::string::npos) << r.output;
}

TEST_F(StrategyCli, model_and_nearest_compile_their_budget_plus_the_candidates) {
  for (const std::string strategy : {"model", "nearest"}) {
    auto r = run_tool("tgemm-tune", "--compile-only --arch sm_75 --shapes " + kQuick + " --space " +
                                        kSimtSpace + " --db " + db_ + " --strategy " + strategy +
                                        " --budget 2 --jobs 2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("strategy '" + strategy + "'"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("configs: "), std::string::npos) << r.output;
  }
}

TEST_F(StrategyCli, simulate_replays_a_database_and_compares_strategies) {
  const std::string db = dir_.file("s3.db");
  ASSERT_EQ(std::system(("gunzip -c " TGEMM_SOURCE_DIR
                         "/tests/data/databases/square_deepbench_h200_s3.db.gz > " +
                         db)
                            .c_str()),
            0);
  auto r = run_tool("tgemm-simulate",
                    "--db " + db + " --strategy model,random,nearest --budget 10%,20% --seeds 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string line : {"model          10% of the space", "random         20% of",
                                 "nearest        10% of", "(means over seeds 1..2)"})
    EXPECT_NE(r.output.find(line), std::string::npos) << r.output;
  auto one = run_tool("tgemm-simulate", "--db " + db + " --strategy model --budget 7");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("f32_NN_m4096_n128_k4096"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("unmeasured in the database"), std::string::npos) << one.output;
  // A time budget is spent on a simulated clock (each trial its recorded runs plus overhead).
  auto timed = run_tool("tgemm-simulate", "--db " + db + " --budget 90s");
  EXPECT_EQ(timed.exit_code, 0) << timed.output;
  EXPECT_NE(timed.output.find("90 s"), std::string::npos) << timed.output;
  auto missing = run_tool("tgemm-simulate", "--db " + dir_.file("none.db"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("none.db: no such file"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace tgemm
