// --budget's forms (a count, a share of the space, a time), its refusals, and the time limit
// wrapped around a strategy.
#include "tuner/search/budget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "src/core/error.h"

namespace tgemm {
namespace {

TEST(Budget, reads_counts_shares_and_times) {
  EXPECT_EQ(parse_budget("200").configs, 200u);
  EXPECT_EQ(parse_budget("010").configs, 10u);  // decimal, not octal
  EXPECT_EQ(parse_budget("0").configs, 0u);
  EXPECT_DOUBLE_EQ(parse_budget("10%").fraction, 0.10);
  EXPECT_DOUBLE_EQ(parse_budget("100%").fraction, 1.0);
  EXPECT_DOUBLE_EQ(parse_budget("90s").seconds, 90);
  EXPECT_DOUBLE_EQ(parse_budget("5m").seconds, 300);
  EXPECT_DOUBLE_EQ(parse_budget("1.5h").seconds, 5400);
  EXPECT_EQ(parse_budget("90s").configs, 0u);  // a time alone sets no count
}

TEST(Budget, rejects_negative_zero_time_and_unknown_units) {
  for (const std::string bad : {"-1", "10x", "0s", "0m", "0%", "101%", "", "s", "%", "1e3", "1e3s",
                                "-5s", "1..5m", "1000001", "99999999999999999999", "8d", "1000h"}) {
    try {
      parse_budget(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("--budget"), std::string::npos) << msg;
      EXPECT_NE(msg.find("90s"), std::string::npos) << msg;  // says what is allowed
      EXPECT_NE(msg.find("'" + bad + "'"), std::string::npos) << msg;
    }
  }
}

TEST(Budget, a_share_caps_each_space_at_least_at_one_config) {
  EXPECT_EQ(parse_budget("10%").configs_for(68), 7u);
  EXPECT_EQ(parse_budget("10%").configs_for(3), 1u);
  EXPECT_EQ(parse_budget("25").configs_for(3), 25u);  // a count is a count
  EXPECT_EQ(parse_budget("10%").describe(), "10% of the space");
  EXPECT_EQ(parse_budget("90s").describe(), "90 s");
}

class Endless final : public Strategy {
 public:
  std::vector<KernelConfig> propose(size_t max_count) override {
    return std::vector<KernelConfig>(max_count, KernelConfig{"x", {{"ID", 1}}});
  }
};

// A family that can run no shape of a layout gets none of the time; a small one (the naive
// kernel's 4 configs) a sixteenth of a full share; one of 64 or more runnable configs a full one.
TEST(Budget, a_time_share_weighs_the_configs_a_family_can_run) {
  EXPECT_EQ(time_share_weight(0), 0.0);
  EXPECT_DOUBLE_EQ(time_share_weight(4), 4.0 / 64.0);
  EXPECT_EQ(time_share_weight(kConfigsForAFullShare), 1.0);
  EXPECT_EQ(time_share_weight(177664), 1.0);
}

TEST(Budget, a_time_limit_stops_proposing_once_spent) {
  Deadline deadline;
  deadline.at = steady_seconds() + 0.03;
  auto limited = time_limited(std::make_unique<Endless>(), &deadline);
  EXPECT_EQ(limited->propose(3).size(), 3u);
  EXPECT_FALSE(deadline.expired);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_TRUE(limited->propose(3).empty());
  EXPECT_TRUE(deadline.expired);
}

// A batch measured on each problem in turn: each takes an even share of what is left, so the
// last problem gets as much as the first, and what one leaves goes to those after it.
TEST(Budget, a_deadline_shares_what_is_left_over_the_ways_still_to_go) {
  double clock = 100;
  Deadline pair;
  pair.now = [&] { return clock; };
  pair.at = 112;
  Deadline first = pair.share_of_left(4);
  EXPECT_DOUBLE_EQ(first.at, 103);
  clock = 101;  // the first problem finished early
  EXPECT_DOUBLE_EQ(pair.share_of_left(3).at, 101 + 11.0 / 3);
  clock = 120;
  EXPECT_TRUE(first.passed());
  EXPECT_DOUBLE_EQ(pair.share_of_left(2).at, 120);          // nothing left: ends at once
  EXPECT_TRUE(std::isinf(Deadline{}.share_of_left(3).at));  // no deadline, none for a share
}

TEST(Budget, a_weighted_share_leaves_the_rest_to_the_runs_after) {
  EXPECT_DOUBLE_EQ(weighted_share(90, 1, 2), 30);
  EXPECT_DOUBLE_EQ(weighted_share(90, 0, 2), 0);
  EXPECT_DOUBLE_EQ(weighted_share(-5, 1, 0), 0);
  EXPECT_DOUBLE_EQ(weighted_share(90, 0, 0), 0);
}

}  // namespace
}  // namespace tgemm
