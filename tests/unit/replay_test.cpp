// The replay runner: recorded results for measured configs, unmeasured ones counted, and the
// strategies compared on a real database (tests/data/databases/square_deepbench_h200_s3.db.gz: 22
// f32 problems on the H200, 68 sgemm_simt and 4 gemm_naive configs recorded on each).
#include "tuner/search/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/dispatch/kernel_selector.h"
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

// A budget of one config once left p2 with nothing it ran (exhaustive order asked the BK=16
// config first, which p2 never measured). Every problem is now given a few configs of the
// family first (candidates.h, kFewCandidates: here the model's picks are all three), whatever
// the budget.
TEST(Replay, every_problem_gets_its_candidates_whatever_the_budget) {
  for (const std::string budget : {"1", "1%", "0.001s"}) {
    ReplayOptions opt;
    opt.strategy = "exhaustive";
    opt.budget = parse_budget(budget);
    const ReplayResult r = replay(synthetic(), opt);
    ASSERT_EQ(r.problems.size(), 2u);
    for (const ReplayProblem& p : r.problems) EXPECT_EQ(p.candidates, 3u) << budget;
    EXPECT_DOUBLE_EQ(r.problems[0].best_found_us, 90) << budget;
    EXPECT_DOUBLE_EQ(r.problems[1].best_found_us, 120) << budget;
  }
}

// Five recorded trials: each costs the overhead plus its runs (one each here, at 100-300 us).
TEST(Replay, a_time_budget_is_spent_on_a_simulated_clock) {
  ReplayOptions opt;
  opt.strategy = "exhaustive";
  opt.budget = parse_budget("90s");
  opt.trial_overhead_s = 0.5;
  const ReplayResult r = replay(synthetic(), opt);
  EXPECT_NEAR(r.seconds, 6 * 0.5 + (100 + 150 + 90 + 300 + 120) * 1e-6, 1e-9);  // + 1 unmeasured
  EXPECT_NEAR(r.candidate_seconds, r.seconds, 1e-9);  // three configs: all candidates
  EXPECT_NE(format_replay(r, opt).find("simulated time 3.0 s: 3.0 s on the candidates"),
            std::string::npos)
      << format_replay(r, opt);
}

// The real H200 database, gunzipped once for the suite.
class ReplayH200 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("replay");
    const std::string db = dir_->file("s3.db");
    const std::string cmd = "gunzip -c " TGEMM_SOURCE_DIR
                            "/tests/data/databases/square_deepbench_h200_s3.db.gz > " +
                            db;
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
// Measured (random over seeds 1..10): model 1.071 / 1.027 / 1.026, random 1.173 / 1.134 /
// 1.111 at 10% / 20% / 30% (before the candidates: model 1.298 / 1.140 / 1.068, random 1.327 /
// 1.171 / 1.144): the model alone cannot tell configs apart that differ only in what it does
// not see (VEC, padding, stages).
TEST_F(ReplayH200, cold_model_beats_random_at_a_fifth_of_the_space_and_more) {
  EXPECT_LT(run("model", "20%").geomean_ratio, random_mean("20%"));
  EXPECT_LT(run("model", "30%").geomean_ratio, random_mean("30%") - 0.05);
  EXPECT_LT(run("model", "30%").geomean_ratio, 1.08);
}

// A new shape tuned beside a database of the other 21 (leave-one-out): the model's prior
// correction and the nearest shapes' bests come from them. Measured: model and nearest 1.000
// at 5% and 10% (4 / 7 configs per problem past about 7 candidates: what the others serve it
// untuned, the nearest shapes' fastest, the model's picks), random 1.001; before the
// candidates, model 1.074 / 1.010, nearest 1.047 / 1.006.
TEST_F(ReplayH200, model_with_a_tenth_of_the_space_reaches_the_recorded_best_on_most_shapes) {
  ReplayOptions opt;
  opt.strategy = "model";
  opt.budget = parse_budget("10%");
  opt.per_problem = true;
  const ReplayResult r = replay(*input_, opt);
  EXPECT_LT(r.geomean_ratio, 1.03);
  EXPECT_GE(r.within(0.03), 18u);
  opt.strategy = "nearest";
  EXPECT_LT(replay(*input_, opt).geomean_ratio, 1.03);
  opt.strategy = "model";
  opt.budget = parse_budget("5%");
  EXPECT_LT(replay(*input_, opt).geomean_ratio, 1.12);
}

// Measured: nearest 1.049 at 10% in one group (19 of 22 within 3%), random 1.173 (1.068 and
// 1.327 before the candidates).
TEST_F(ReplayH200, nearest_seeds_reach_most_bests_with_a_tenth_of_the_space) {
  const ReplayResult r = run("nearest", "10%");
  EXPECT_LT(r.geomean_ratio, 1.10);
  EXPECT_GE(r.within(0.03), 14u);
  EXPECT_LT(r.geomean_ratio, random_mean("10%") - 0.08);
}

TEST_F(ReplayH200, model_predictions_cover_every_ok_sgemm_trial) {
  const std::string csv = model_predictions_csv(*input_);
  EXPECT_EQ(csv.rfind("problem,config,predicted_us,recorded_us\n", 0), 0u);
  EXPECT_NE(csv.find("sgemm_simt_bm128_bn128"), std::string::npos);
}

// Candidates first, under every kind of budget, on a database of four FP32 families (session
// 25 on the H200: sgemm_warp, sgemm_simt, gemv_simt and the naive kernel on 38 f32 problems,
// gemv_mma on 4 f32x3 ones).
class CandidatesFirst : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("replay_s25");
    const std::string db = dir_->file("s25.db");
    const std::string cmd = "gunzip -c " TGEMM_SOURCE_DIR "/benchmarks/h200/fp32.db.gz > " + db;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    TuningDb tuning(db, TuningDb::Mode::read_only);
    input_ = new ReplayInput(load_replay_input(tuning));
  }
  static void TearDownTestSuite() {
    delete input_;
    delete dir_;
  }
  static ReplayResult run(const std::string& budget, const std::string& strategy = "random") {
    ReplayOptions opt;
    opt.strategy = strategy;
    opt.budget = parse_budget(budget);
    opt.batch = 16;
    return replay(*input_, opt);
  }
  // The families with an ok trial recorded on each problem.
  static std::map<std::string, std::set<std::string>> families_of_problems() {
    std::map<std::string, std::set<std::string>> out;
    for (const TrialRecord& r : input_->trials)
      if (r.trial.status == TrialStatus::ok)
        out[r.problem.key()].insert(r.trial.config.template_name);
    return out;
  }
  static testing::TempDir* dir_;
  static ReplayInput* input_;
};
testing::TempDir* CandidatesFirst::dir_ = nullptr;
ReplayInput* CandidatesFirst::input_ = nullptr;

// On every problem: every candidate of every family before any explored config, at least one
// candidate of each family that ran on it, and every shipped default line that runs it (and
// the database recorded) among them.
TEST_P(CandidatesFirst, every_problem_measures_every_familys_candidates_before_exploring) {
  const ReplayResult r = run(GetParam());
  const auto families = families_of_problems();
  ASSERT_EQ(r.problems.size(), 50u);
  for (const ReplayProblem& p : r.problems) {
    SCOPED_TRACE(p.key);
    std::set<std::string> with_candidates, candidates;
    bool explored = false;
    for (const ReplayAsk& a : p.trace) {
      if (!a.candidate) explored = true;
      EXPECT_FALSE(a.candidate && explored) << a.config.canonical_name() << " after exploring";
      if (a.candidate) {
        with_candidates.insert(a.config.template_name);
        candidates.insert(a.config.canonical_name());
      }
    }
    for (const std::string& family : families.at(p.key))
      EXPECT_TRUE(with_candidates.count(family)) << family;
    Problem problem;
    for (const TrialRecord& t : input_->trials)
      if (t.problem.key() == p.key) problem = t.problem;
    // A line of a family that ran here and recorded on this variant (the replayed space).
    for (const DefaultKernel& d : shipped_default_kernels()) {
      if (d.types != problem.types || !can_run(d.config, problem, "sm_90") ||
          !families.at(p.key).count(d.config.template_name))
        continue;
      const bool recorded =
          std::any_of(input_->trials.begin(), input_->trials.end(), [&](const TrialRecord& t) {
            return t.trial.config.canonical_name() == d.config.canonical_name() &&
                   t.problem.op_a == problem.op_a && t.problem.op_b == problem.op_b;
          });
      if (recorded) {
        EXPECT_TRUE(candidates.count(d.config.canonical_name())) << d.config.canonical_name();
      }
    }
    EXPECT_GT(p.best_found_us, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Budgets, CandidatesFirst, ::testing::Values("2", "5%", "0.001s", "60s"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return "budget_" + name;
                         });

// A spent time budget explores nothing past the candidates (a problem still measures one
// config of each batch it was given), and the candidates cost the same as under any budget.
TEST_F(CandidatesFirst, a_spent_time_budget_still_measures_every_candidate) {
  const ReplayResult spent = run("0.001s"), counted = run("2");
  ASSERT_EQ(spent.problems.size(), counted.problems.size());
  for (size_t i = 0; i < spent.problems.size(); ++i) {
    EXPECT_EQ(spent.problems[i].candidates, counted.problems[i].candidates);
    EXPECT_LE(spent.problems[i].asked - spent.problems[i].candidates, 5u);
  }
}

// A time budget is shared over the problems of a variant: each batch measures on every problem
// within an even share of what is left, so the last problem of a group explores too. Spent on
// the problems in turn (before), the first large shapes of the f32 NN group took a family's
// whole share and the later ones explored nothing.
TEST_F(CandidatesFirst, a_time_budget_is_shared_over_the_problems_of_a_variant) {
  const ReplayResult r = run("60s");
  size_t explored_none = 0;
  for (const ReplayProblem& p : r.problems) explored_none += p.asked == p.candidates;
  EXPECT_EQ(explored_none, 0u);
  // The candidates' time is not the budget's: exploring spends most of the 60 s.
  EXPECT_NEAR(r.candidate_seconds, run("0.001s").candidate_seconds, 1e-6);
  EXPECT_LT(r.seconds - r.candidate_seconds, 60 + 30);  // a trial under way at a deadline ends
  EXPECT_GT(r.seconds - r.candidate_seconds, 40);
}

}  // namespace
}  // namespace tgemm
