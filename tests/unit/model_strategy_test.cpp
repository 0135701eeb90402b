// ModelStrategy: ranks by the model, spends its budget in a few batches, explores a seeded
// share, refits from what was measured, seeds with the nearest shapes' bests; and
// nearest_tuned_configs' choice of neighbours.
#include "tuner/search/model_strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/common/h200_model.h"
#include "tests/common/sgemm_configs.h"
#include "tests/common/trial_records.h"
#include "tuner/search/ask_tell.h"

namespace tgemm {
namespace {

using testing::sgemm_config;

Problem nn(int64_t m, int64_t n, int64_t k) {
  return Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, k);
}

PerformanceModel model_for(std::vector<Problem> problems) {
  return testing::h200_model("sgemm_simt", std::move(problems));
}

// A small legal-looking space: tiles x split-K x vector width.
std::vector<KernelConfig> small_space() {
  std::vector<KernelConfig> out;
  for (int64_t bm : {32, 64, 128})
    for (int64_t split : {1, 4, 16})
      for (int64_t vec : {1, 4}) {
        const int64_t t = bm == 128 ? 8 : 4;
        out.push_back(sgemm_config({{"BM", bm},
                                    {"BN", bm},
                                    {"TM", t},
                                    {"TN", t},
                                    {"SPLIT_K", split},
                                    {"VEC", vec},
                                    {"WARP_N", bm == 32 ? 4 : 8}}));
      }
  return out;
}

std::vector<KernelConfig> drain(Strategy& s, size_t batch) {
  std::vector<KernelConfig> all;
  for (auto b = s.propose(batch); !b.empty(); b = s.propose(batch))
    all.insert(all.end(), b.begin(), b.end());
  return all;
}

TEST(ModelStrategy, proposes_the_predicted_best_first_and_each_config_once) {
  const std::vector<Problem> problems{nn(4096, 128, 4096)};
  const PerformanceModel model = model_for(problems);
  ModelStrategy s(small_space(), 0, 1, model, 0.0);
  const auto all = drain(s, 100);
  ASSERT_EQ(all.size(), small_space().size());
  std::set<std::string> distinct;
  for (const auto& c : all) distinct.insert(c.params_text());
  EXPECT_EQ(distinct.size(), all.size());
  double best = 1e300;
  for (const auto& c : small_space()) best = std::min(best, model.predict_us(c, problems[0]));
  EXPECT_DOUBLE_EQ(model.predict_us(all.front(), problems[0]), best);
}

// 1023^3 packed is 4-byte aligned: the VEC=4 configs cannot load it.
TEST(ModelStrategy, never_proposes_a_config_that_can_run_no_problem_of_the_group) {
  ModelStrategy s(small_space(), 0, 1, model_for({nn(1023, 1023, 1023)}), 0.0);
  const auto all = drain(s, 100);
  EXPECT_EQ(all.size(), small_space().size() / 2);
  for (const KernelConfig& c : all) EXPECT_EQ(c.get("VEC"), 1) << c.canonical_name();
}

TEST(ModelStrategy, spends_a_budget_in_several_batches) {
  ModelStrategy s(small_space(), 12, 1, model_for({nn(1024, 1024, 1024)}), 0.0);
  std::vector<size_t> sizes;
  for (auto b = s.propose(256); !b.empty(); b = s.propose(256)) sizes.push_back(b.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 4}));  // a quarter of 12, at least 4
}

TEST(ModelStrategy, exploration_is_a_seeded_share_of_the_proposals) {
  const auto problems = std::vector<Problem>{nn(2048, 2048, 2048)};
  const auto greedy =
      drain(*std::make_unique<ModelStrategy>(small_space(), 10, 1, model_for(problems), 0.0), 100);
  const auto a =
      drain(*std::make_unique<ModelStrategy>(small_space(), 10, 5, model_for(problems), 0.5), 100);
  const auto b =
      drain(*std::make_unique<ModelStrategy>(small_space(), 10, 5, model_for(problems), 0.5), 100);
  EXPECT_EQ(a, b);       // the same seed, the same draws
  EXPECT_NE(a, greedy);  // half of them random
  EXPECT_EQ(a.size(), 10u);
}

TEST(ModelStrategy, a_measured_slowdown_of_a_feature_is_learned) {
  const std::vector<Problem> problems{nn(2048, 2048, 2048), nn(1024, 1024, 1024)};
  const PerformanceModel model = model_for(problems);
  ModelStrategy s(small_space(), 0, 1, model, 0.0);
  const auto batch = s.propose(100);  // the whole space: the ridge moves on ample evidence
  // VEC=1 measures 3x its prediction, VEC=4 as predicted.
  for (size_t p = 0; p < problems.size(); ++p) {
    std::vector<TrialResult> results;
    for (const auto& c : batch) {
      TrialResult r;
      r.config = c;
      r.status = TrialStatus::ok;
      r.time_median_us = model.predict_us(c, problems[p]) * (c.get("VEC") == 1 ? 3.0 : 1.0);
      results.push_back(r);
    }
    s.report_problem(p, results);
  }
  s.propose(0);  // refits
  const size_t vec1 = s.index_of(small_space()[0]), vec4 = s.index_of(small_space()[1]);
  ASSERT_EQ(small_space()[0].get("VEC"), 1);
  EXPECT_GT(s.correction(vec1) / s.correction(vec4), 1.3);
  // The model alone prices 4-byte copies at 1.15x; the measured 3x is learned on top of that,
  // and the ridge keeps the estimate below the full 3x.
  EXPECT_NEAR(model.predict_us(small_space()[0], problems[0]) /
                  model.predict_us(small_space()[1], problems[0]),
              1.15, 0.01);
  EXPECT_GT(s.estimate_us(vec1, 0), 1.3 * s.estimate_us(vec4, 0));
  EXPECT_LT(s.estimate_us(vec1, 0), 3.0 * s.estimate_us(vec4, 0));
}

TEST(ModelStrategy, other_shapes_trials_set_the_correction_before_anything_is_measured) {
  const std::vector<Problem> problems{nn(2048, 2048, 2048)};
  const PerformanceModel model = model_for(problems);
  // Another shape's trials: VEC=1 ran 3x slower than predicted there.
  const Problem other = nn(1024, 1024, 1024);
  std::vector<PriorTrial> prior;
  for (const auto& c : small_space())
    prior.push_back({c, other, model.predict_us(c, other) * (c.get("VEC") == 1 ? 3.0 : 1.0)});
  ModelStrategy with(small_space(), 0, 1, model, 0.0, {}, prior);
  ModelStrategy without(small_space(), 0, 1, model, 0.0);
  const size_t vec1 = with.index_of(small_space()[0]), vec4 = with.index_of(small_space()[1]);
  EXPECT_GT(with.correction(vec1) / with.correction(vec4), 1.3);
  EXPECT_DOUBLE_EQ(without.correction(vec1), 1.0);
  EXPECT_EQ(with.propose(1).front().get("VEC"), 4);
}

TEST(ModelStrategy, seeds_come_first_but_take_at_most_half_the_budget) {
  const auto space = small_space();
  std::vector<KernelConfig> seeds{space[7], space[3], space[11], space[5], space[9]};
  seeds.push_back(sgemm_config({{"BM", 256}}));  // not in the space: dropped
  ModelStrategy s(space, 6, 1, model_for({nn(1024, 1024, 1024)}), 0.0, seeds);
  const auto all = drain(s, 100);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0], space[7]);
  EXPECT_EQ(all[1], space[3]);
  EXPECT_EQ(all[2], space[11]);
  EXPECT_EQ(std::count(all.begin(), all.end(), space[5]), 0);
}

TrialRecord record(const Problem& p, const KernelConfig& c, double us) {
  return testing::ok_trial_record(p, c, us);
}

// A GEMV config's rows past the problem's small side cost FFMAs (PerformanceModel): in a group
// of an N = 1 and an N = 16 shape, the 16-row configs run both, yet a 1-row config comes second.
// Priced by bytes alone (before session 23), 16-row configs filled the first proposals: on the
// H200, 248 of 278 trials of 4096x1x4096 had ROWS=16 and 7 had its best's ROWS=1.
TEST(ModelStrategy, a_narrow_shape_gets_configs_of_its_own_rows_early) {
  std::vector<KernelConfig> space;
  for (int64_t rows : {16, 1})
    for (int64_t kb : {256, 512})
      for (int64_t lw : {1, 4})
        space.push_back(KernelConfig::from_params_text(
            "gemv_simt", "SIDE=1,ROWS=" + std::to_string(rows) + ",VEC=4,WARPS=8,KB=" +
                             std::to_string(kb) + ",LW=" + std::to_string(lw) +
                             ",SPLIT_MODE=1,PREFETCH=1,STAGES=0,KLANES=8,CLUSTER=1"));
  const std::vector<Problem> problems{nn(4096, 1, 4096), nn(4096, 16, 4096)};
  ModelStrategy s(space, 0, 1, testing::h200_model("gemv_simt", problems), 0.0);
  const auto first = s.propose(2);
  ASSERT_EQ(first.size(), 2u);
  std::set<int64_t> rows;
  for (const KernelConfig& c : first) rows.insert(c.get("ROWS"));
  EXPECT_EQ(rows, (std::set<int64_t>{1, 16}));
}

TEST(NearestTunedConfigs, takes_the_nearest_shapes_fastest_and_skips_the_problem_itself) {
  const KernelConfig a = sgemm_config({{"BM", 32}}), b = sgemm_config({{"BM", 64}}),
                     c = sgemm_config({{"BM", 256}}), d = sgemm_config({{"SPLIT_K", 4}});
  const std::vector<TrialRecord> trials{
      record(nn(1024, 1024, 1024), a, 10),  // the target itself: skipped
      record(nn(2048, 2048, 2048), b, 50),  // nearest
      record(nn(2048, 2048, 2048), c, 40),  // its fastest
      record(nn(8192, 8192, 8192), d, 900),
      record(Problem::packed(GemmTypes{}, Op::T, Op::N, 1024, 1024, 1024), d, 1),  // other layout
  };
  const auto near = nearest_tuned_configs({nn(1024, 1024, 1024)}, trials, "sgemm_simt", 1, 2);
  EXPECT_EQ(near, (std::vector<KernelConfig>{c, b}));
  const auto two = nearest_tuned_configs({nn(1024, 1024, 1024)}, trials, "sgemm_simt", 2, 1);
  EXPECT_EQ(two, (std::vector<KernelConfig>{c, d}));
  EXPECT_TRUE(nearest_tuned_configs({nn(1024, 1024, 1024)}, trials, "gemm_mma").empty());
}

}  // namespace
}  // namespace tgemm
