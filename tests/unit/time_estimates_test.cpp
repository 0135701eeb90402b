// The selector's time estimates for the candidates it weighs: a carried time, a default's
// scaled model time, and a split sibling's time from its parent's, in one pass.
#include "src/dispatch/time_estimates.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using Candidate = TimeEstimates::Candidate;

KernelConfig simt(int64_t bm, int64_t split_k = 1) {
  return testing::sgemm_config({{"BM", bm}, {"SPLIT_K", split_k}});
}

Candidate candidate(Candidate::Source source, KernelConfig config, double factor = 1,
                    int parent = -1) {
  Candidate c;
  c.source = source;
  c.config = std::move(config);
  c.factor = factor;
  c.parent = parent;
  return c;
}

class TimeEstimatesTest : public ::testing::Test {
 protected:
  // simt(128) measured 100 us on `tuned`: the model's scale for it on this GPU.
  TimeEstimatesTest() : estimates_("sm_90", 132, {}, SelectorParameters{}) {
    estimates_.fit_model_scale({{tuned_.key(), {{simt(128), "hash", 100.0}}}},
                               {{tuned_.key(), &tuned_}});
  }
  const Problem tuned_ = Problem::packed(GemmTypes{}, Op::N, Op::N, 2048, 2048, 2048);
  TimeEstimates estimates_;
};

TEST_F(TimeEstimatesTest, a_carried_time_to_its_own_shape_is_the_measured_time_times_its_factor) {
  Candidate c = candidate(Candidate::Source::carried, simt(64), 1.5);
  c.there = &tuned_;
  c.us_there = 50;
  const std::vector<double> us = estimates_.times({c}, tuned_);
  ASSERT_EQ(us.size(), 1u);
  EXPECT_DOUBLE_EQ(us[0], 75.0);
}

// A default line with a record here is its model time scaled by that record (on the tuned
// shape itself: the measured time); one without a record has no time, nor have its siblings.
TEST_F(TimeEstimatesTest, a_default_needs_a_record_here_and_its_sibling_needs_a_timed_parent) {
  const std::vector<double> us =
      estimates_.times({candidate(Candidate::Source::model, simt(128)),
                        candidate(Candidate::Source::resplit, simt(128, 2), 1.2, 0),
                        candidate(Candidate::Source::model, simt(64)),
                        candidate(Candidate::Source::resplit, simt(64, 2), 1.2, 2)},
                       tuned_);
  ASSERT_EQ(us.size(), 4u);
  EXPECT_NEAR(us[0], 100.0, 1e-9);
  EXPECT_TRUE(std::isfinite(us[1]));
  EXPECT_GT(us[1], 0.0);
  EXPECT_NE(us[1], us[0] * 1.2);  // resplit carries the parent's time by the sibling's ratios
  EXPECT_TRUE(std::isinf(us[2]));
  EXPECT_TRUE(std::isinf(us[3]));
}

}  // namespace
}  // namespace tgemm
