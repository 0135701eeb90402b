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

namespace tgemm {
namespace {

using testing::sgemm_config;

TrialRecord record(const Problem& p, const KernelConfig& c, double us) {
  TrialRecord r;
  r.problem = p;
  r.device_name = "NVIDIA H200";
  r.arch = "sm_90";
  r.trial.config = c;
  r.trial.status = TrialStatus::ok;
  r.trial.time_median_us = us;
  return r;
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

// Measured: model 1.018 at 20% (17 of 22 within 3%), random 1.17 over five seeds.
TEST_F(ReplayH200, model_with_a_fifth_of_the_space_is_within_a_few_percent_on_most_problems) {
  const ReplayResult r = run("model", "20%");
  EXPECT_LE(r.asked, 16u);
  EXPECT_LT(r.geomean_ratio, 1.04);
  EXPECT_GE(r.within(0.03), 15u);
  EXPECT_GE(r.within(0.10), 19u);
}

// Measured: model 1.176 / 1.018 / 1.007, random 1.327 / 1.171 / 1.144 at 10% / 20% / 30%.
TEST_F(ReplayH200, model_beats_random_at_the_same_budget) {
  for (const std::string budget : {"10%", "20%", "30%"}) {
    const double model = run("model", budget).geomean_ratio;
    const double random = random_mean(budget);
    EXPECT_LT(model, random - 0.08) << budget;
  }
}

// Measured: nearest 1.068 at 10% (17 of 22 within 3%): the neighbours' bests carry over.
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
