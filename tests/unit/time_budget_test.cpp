// TimeBudget on a hand-driven clock: the candidates' time is not counted, each pair's deadline
// is its weighted share of what is left, and what a pair leaves over goes to the rest.
#include "tuner/session/time_budget.h"

#include <gtest/gtest.h>

#include <memory>

namespace tgemm {
namespace {

// A clock the test moves.
struct HandClock {
  std::shared_ptr<double> now = std::make_shared<double>(100);
  RunClock run_clock() const {
    return [now = now] { return *now; };
  }
  void advance(double seconds) const { *now += seconds; }
};

TEST(TimeBudget, the_candidates_time_is_not_counted_as_exploring) {
  HandClock clock;
  TimeBudget budget(10, clock.run_clock());
  clock.advance(2);
  budget.candidates_started();
  clock.advance(5);
  budget.candidates_finished();
  clock.advance(1);
  EXPECT_DOUBLE_EQ(budget.candidate_seconds(), 5);
  EXPECT_DOUBLE_EQ(budget.exploring_seconds(), 3);
  EXPECT_FALSE(budget.spent());
  clock.advance(7);
  EXPECT_TRUE(budget.spent());
}

TEST(TimeBudget, each_pair_gets_its_weighted_share_of_what_is_left) {
  HandClock clock;
  TimeBudget budget(12, clock.run_clock());
  budget.set_pair_weights({1.0, 0.5, 0.5});
  // 12 s over weights 1 + 0.5 + 0.5: the first pair's share is 6 s.
  EXPECT_DOUBLE_EQ(budget.next_pair_deadline(), 100 + 6);
  // It finished after 2 s: the 10 s left go to the other two, 5 s each.
  clock.advance(2);
  budget.pair_finished(false);
  EXPECT_DOUBLE_EQ(budget.next_pair_deadline(), 102 + 5);
  clock.advance(5);
  budget.pair_finished(true);
  EXPECT_DOUBLE_EQ(budget.next_pair_deadline(), 107 + 5);
  EXPECT_EQ(budget.pairs_finished(), 2u);
  EXPECT_EQ(budget.pairs_stopped(), 1u);
}

TEST(TimeBudget, a_pair_of_no_weight_gets_no_time_and_a_spent_budget_none) {
  HandClock clock;
  TimeBudget budget(4, clock.run_clock());
  budget.set_pair_weights({0.0, 1.0, 1.0});
  EXPECT_DOUBLE_EQ(budget.next_pair_deadline(), 100);
  clock.advance(6);  // past the whole budget
  EXPECT_DOUBLE_EQ(budget.next_pair_deadline(), 106);
}

TEST(TimeBudget, without_seconds_it_is_never_spent) {
  HandClock clock;
  TimeBudget budget(0, clock.run_clock());
  clock.advance(1e6);
  EXPECT_FALSE(budget.limited());
  EXPECT_FALSE(budget.spent());
  EXPECT_DOUBLE_EQ(budget.exploring_seconds(), 1e6);
}

}  // namespace
}  // namespace tgemm
