// The replay runner: recorded results for measured configs, unmeasured ones counted, and the
// strategies compared on a real database (notes/results/square_deepbench_h200_s3.db.gz: 22
// f32 problems on the H200, 68 sgemm_simt and 4 gemm_naive configs recorded on each).
#include "tuner/search/replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/temp_dir.h"
#include "tests/common/trial_records.h"

namespace tgemm {
namespace {

using testing::sgemm_config;

TrialRecord record(const Problem& p, const KernelConfig& c, double us) {
  return testing::ok_trial_record(p, c, us);
}

ReplayInput synthetic() {
  ReplayInput in;
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.arch = "sm_90";
  d.sm_count = 132;
  d.limits = arch_limits("sm_90");
  in.devices.push_back(d);
  const Problem p1 = Problem::packed(GemmTypes{}, Op::N, Op::N, 1024, 1024, 1024);
  const Problem p2 = Problem::packed(GemmTypes{}, Op::N, Op::N, 4096, 128, 4096);
  const KernelConfig a = sgemm_config(), b = sgemm_config({{"SPLIT_K", 4}}),
                     c = sgemm_config({{"BK", 16}});
  in.trials = {record(p1, a, 100), record(p1, b, 150), record(p1, c, 90), record(p2, a, 300),
               record(p2, b, 120)};  // p2 never ran c
  return in;
}

TEST(Replay, recorded_configs_get_their_times_and_missing_ones_count_as_unmeasured) {
  ReplayOptions opt;
  opt.strategy = "exhaustive";
  const ReplayResult r = replay(synthetic(), opt);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.space, 3u);
  EXPECT_EQ(r.asked, 3u);
  EXPECT_EQ(r.unmeasured, 1u);
  EXPECT_EQ(r.problems[0].asked, 3u);
  EXPECT_EQ(r.problems[1].unmeasured, 1u);
  EXPECT_DOUBLE_EQ(r.problems[0].best_found_us, 90);
  EXPECT_DOUBLE_EQ(r.problems[1].best_found_us, 120);
  EXPECT_DOUBLE_EQ(r.geomean_ratio, 1.0);
  EXPECT_NE(format_replay(r, opt).find("1 asked config-problem pair(s) unmeasured"),
            std::string::npos)
      << format_replay(r, opt);
}

TEST(Replay, a_budget_limits_what_is_found) {
  ReplayOptions opt;
  opt.strategy = "exhaustive";
  opt.budget = parse_budget("1");
  const ReplayResult r = replay(synthetic(), opt);
  EXPECT_EQ(r.asked, 1u);
  // Exhaustive order is by parameter text: the BK=16 config first; p2 never measured it.
  EXPECT_DOUBLE_EQ(r.problems[0].best_found_us, 90);
  EXPECT_DOUBLE_EQ(r.problems[1].best_found_us, 0);
  EXPECT_NEAR(r.geomean_ratio, std::sqrt(ReplayResult::kNothingFound), 1e-9);
}

TEST(Replay, rejects_a_time_budget) {
  ReplayOptions opt;
  opt.budget = parse_budget("90s");
  EXPECT_THROW(replay(synthetic(), opt), Error);
}

// The real H200 database, gunzipped once for the suite.
class ReplayH200 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("replay");
    const std::string db = dir_->file("s3.db");
    const std::string cmd =
        "gunzip -c " TGEMM_SOURCE_DIR "/notes/results/square_deepbench_h200_s3.db.gz > " + db;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    TuningDb tuning(db, TuningDb::Mode::read_only);
    input_ = new ReplayInput(load_replay_input(tuning));
  }
  static void TearDownTestSuite() {
    delete input_;
    delete dir_;
  }
  static ReplayResult run(const std::string& strategy, const std::string& budget,
                          uint64_t seed = 1) {
    ReplayOptions opt;
    opt.strategy = strategy;
    opt.budget = parse_budget(budget);
    opt.seed = seed;
    return replay(*input_, opt);
  }
  // Geometric mean of random's geometric means over seeds 1..5.
  static double random_mean(const std::string& budget) {
    double log_sum = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed)
      log_sum += std::log(run("random", budget, seed).geomean_ratio);
    return std::exp(log_sum / 5);
  }
  static testing::TempDir* dir_;
  static ReplayInput* input_;
};
testing::TempDir* ReplayH200::dir_ = nullptr;
ReplayInput* ReplayH200::input_ = nullptr;

TEST_F(ReplayH200, the_whole_space_finds_every_recorded_best) {
  const ReplayResult r = run("exhaustive", "100%");
  EXPECT_EQ(r.problems.size(), 22u);
  EXPECT_EQ(r.space, 72u);
  EXPECT_DOUBLE_EQ(r.geomean_ratio, 1.0);
  EXPECT_EQ(r.unmeasured, 0u);
}

// As tgemm-tune on an empty database: one group of 22 problems, each config measured on all.
// Measured (random over seeds 1..10): model 1.298 / 1.140 / 1.068, random 1.327 / 1.171 /
// 1.144 at 10% / 20% / 30%: the model alone cannot tell configs apart that differ only in
// what it does not see (VEC, padding, stages), so its edge shows from 20% on.
TEST_F(ReplayH200, cold_model_beats_random_at_a_fifth_of_the_space_and_more) {
  EXPECT_LT(run("model", "20%").geomean_ratio, random_mean("20%"));
  EXPECT_LT(run("model", "30%").geomean_ratio, random_mean("30%") - 0.05);
  EXPECT_LT(run("model", "30%").geomean_ratio, 1.08);
}

// A new shape tuned beside a database of the other 21 (leave-one-out): the model's prior
// correction and the nearest shapes' bests come from them. Measured: model 1.074 / 1.010,
// nearest 1.047 / 1.006 at 5% / 10% (4 / 7 configs per problem).
TEST_F(ReplayH200, model_with_a_tenth_of_the_space_reaches_the_recorded_best_on_most_shapes) {
  ReplayOptions opt;
  opt.strategy = "model";
  opt.budget = parse_budget("10%");
  opt.per_problem = true;
  const ReplayResult r = replay(*input_, opt);
  EXPECT_LT(r.geomean_ratio, 1.03);
  EXPECT_GE(r.within(0.03), 18u);
  EXPECT_LT(r.geomean_ratio, random_mean("10%") - 0.2);
  opt.strategy = "nearest";
  EXPECT_LT(replay(*input_, opt).geomean_ratio, 1.03);
  opt.strategy = "model";
  opt.budget = parse_budget("5%");
  EXPECT_LT(replay(*input_, opt).geomean_ratio, 1.12);
}

// Measured: nearest 1.068 at 10% in one group (17 of 22 within 3%).
TEST_F(ReplayH200, nearest_seeds_reach_most_bests_with_a_tenth_of_the_space) {
  const ReplayResult r = run("nearest", "10%");
  EXPECT_LT(r.geomean_ratio, 1.10);
  EXPECT_GE(r.within(0.03), 14u);
  EXPECT_LT(r.geomean_ratio, random_mean("10%") - 0.15);
}

TEST_F(ReplayH200, model_predictions_cover_every_ok_sgemm_trial) {
  const std::string csv = model_predictions_csv(*input_);
  EXPECT_EQ(csv.rfind("problem,config,predicted_us,recorded_us\n", 0), 0u);
  EXPECT_NE(csv.find("sgemm_simt_bm128_bn128"), std::string::npos);
}

}  // namespace
}  // namespace tgemm
