// tgemm-db explain and tgemm-tune --explain on real data: the database session 3 tuned on
// the H200 (square and deepbench). Every figure the explanation prints is checked against
// the rows it comes from.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::query_text;
using testing::run_tool;
using testing::TempDir;

constexpr const char* k4096 = "f32_NN_m4096_n4096_k4096_b0_a16.16.16";

class ExplainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                                "/tests/data/databases/square_deepbench_h200_s3.db.gz' > '" + db_ +
                                "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::string explain(const std::string& shape) {
    auto r = run_tool("tgemm-db", "--db " + db_ + " explain " + shape);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  }
  int64_t problem_count(const std::string& where) {
    return query_int(db_,
                     "select count(*) from trials t join problems p on p.id = t.problem_id "
                     "where p.key = '" +
                         std::string(k4096) + "' and " + where);
  }
  TempDir dir_{"explain_cli"};
  std::string db_ = dir_.file("s3.db");
};

TEST_F(ExplainCli, a_tuned_shape_names_its_best_and_why_it_won) {
  const std::string out = explain("--m 4096 --n 4096 --k 4096");
  const std::string best = query_text(
      db_,
      "select k.canonical_name from best b join trials t on t.id = b.trial_id join kernels k "
      "on k.id = t.kernel_id join problems p on p.id = b.problem_id where p.key = '" +
          std::string(k4096) + "'");
  ASSERT_FALSE(best.empty());
  EXPECT_NE(out.find("the dispatcher serves its tuned best, " + best), std::string::npos) << out;
  EXPECT_NE(out.find("untuned, it would get "), std::string::npos) << out;
  // Which of the selector's rules chose (KernelSelector::choose_exact).
  EXPECT_NE(out.find(best + "\n    by the rule: tuned on this problem ("), std::string::npos)
      << out;
  const std::string counts =
      "trials: " + std::to_string(problem_count("t.status = 'ok'")) + " ok, " +
      std::to_string(problem_count("t.status = 'resource_exceeded'")) + " resource_exceeded";
  EXPECT_NE(out.find(counts), std::string::npos) << out;
  // 128x128 tiles: 32 x 32 = 1024 blocks over 132 SMs x 2 resident (127 registers x 256
  // threads: the register file holds two) = 3.88 waves.
  EXPECT_NE(out.find("2 block(s) of 256 threads per SM (limited by registers; 127 registers"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("3.88 waves over 132 SMs"), std::string::npos) << out;
  EXPECT_NE(out.find("the runner-up is "), std::string::npos) << out;
}

TEST_F(ExplainCli, an_untuned_shape_names_its_path_and_is_not_an_error) {
  // The fixture tuned NN only: NT borrows its NN neighbours' bests (B differs, A alike).
  const std::string out = explain("--m 3000 --n 100 --k 4096 --layout NT");
  EXPECT_NE(out.find(", measured on the tuned shape f32_NN_"), std::string::npos) << out;
  EXPECT_NE(out.find("not tuned on this device"), std::string::npos) << out;
}

TEST_F(ExplainCli, bad_shapes_and_unknown_devices_are_reported) {
  auto bad = run_tool("tgemm-db", "--db " + db_ + " explain --m 0 --n 1 --k 1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--m must be from 1"), std::string::npos) << bad.output;
  // A device the database does not hold is a question without an answer: exit 3, as best.
  const auto none =
      run_tool("tgemm-db", "--db " + db_ + " explain --m 64 --n 64 --k 64 --device 'No Such GPU'");
  EXPECT_EQ(none.exit_code, 3) << none.output;
  EXPECT_NE(none.output.find("no device 'No Such GPU'"), std::string::npos) << none.output;
}

// Without a GPU, --explain still reports what each constraint pruned on the target arch.
TEST(TuneExplainCli, compile_only_lists_what_each_constraint_pruned) {
  TempDir dir{"tune_explain"};
  auto r = run_tool("tgemm-tune", std::string("--compile-only --arch sm_75 --shapes ") +
                                      TGEMM_SOURCE_DIR + "/configs/shapes/quick.yaml --db " +
                                      dir.file("t.db") + " --budget 2 --jobs 2 --explain");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sgemm_simt on sm_75: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the block must be whole warps"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" pruned"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tgemm
