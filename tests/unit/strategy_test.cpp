// Strategies: exhaustive order and budget, random sampling without replacement that is
// deterministic per seed, and the error for an unknown name.
#include "tuner/search/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <unordered_set>

#include "src/core/error.h"

namespace tgemm {
namespace {

std::vector<KernelConfig> numbered_configs(int count) {
  std::vector<KernelConfig> configs;
  for (int i = 0; i < count; ++i) configs.push_back({"sgemm_simt", {{"ID", i}}});
  return configs;
}

// Everything a strategy proposes, in batches of `batch`.
std::vector<int64_t> drain(Strategy& strategy, size_t batch) {
  std::vector<int64_t> ids;
  for (;;) {
    const auto configs = strategy.propose(batch);
    if (configs.empty()) break;
    EXPECT_LE(configs.size(), batch);
    for (const auto& c : configs) ids.push_back(c.get("ID"));
  }
  EXPECT_TRUE(strategy.propose(batch).empty()) << "stays done";
  return ids;
}

std::vector<int64_t> iota_ids(int count) {
  std::vector<int64_t> ids;
  for (int i = 0; i < count; ++i) ids.push_back(i);
  return ids;
}

TEST(Strategy, exhaustive_proposes_every_config_in_order) {
  auto s = make_strategy("exhaustive", numbered_configs(10), 0, 1);
  EXPECT_EQ(drain(*s, 3), iota_ids(10));
}

TEST(Strategy, exhaustive_batches_have_the_requested_size) {
  auto s = make_strategy("exhaustive", numbered_configs(10), 0, 1);
  EXPECT_EQ(s->propose(4).size(), 4u);
  EXPECT_EQ(s->propose(4).size(), 4u);
  EXPECT_EQ(s->propose(4).size(), 2u);
  EXPECT_TRUE(s->propose(4).empty());
}

TEST(Strategy, exhaustive_stops_at_the_budget) {
  auto s = make_strategy("exhaustive", numbered_configs(10), 4, 1);
  EXPECT_EQ(drain(*s, 3), iota_ids(4));
}

TEST(Strategy, budget_above_the_legal_count_proposes_all) {
  auto s = make_strategy("exhaustive", numbered_configs(5), 100, 1);
  EXPECT_EQ(drain(*s, 100), iota_ids(5));
  auto r = make_strategy("random", numbered_configs(5), 100, 1);
  auto ids = drain(*r, 100);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, iota_ids(5));
}

TEST(Strategy, empty_legal_set_proposes_nothing) {
  EXPECT_TRUE(make_strategy("exhaustive", {}, 0, 1)->propose(10).empty());
  EXPECT_TRUE(make_strategy("random", {}, 5, 1)->propose(10).empty());
}

TEST(Strategy, propose_zero_returns_nothing_and_keeps_the_position) {
  auto s = make_strategy("exhaustive", numbered_configs(3), 0, 1);
  EXPECT_TRUE(s->propose(0).empty());
  EXPECT_EQ(drain(*s, 2), iota_ids(3));
}

TEST(Strategy, random_with_no_budget_is_a_permutation_of_all) {
  auto s = make_strategy("random", numbered_configs(50), 0, 42);
  auto ids = drain(*s, 7);
  ASSERT_EQ(ids.size(), 50u);
  EXPECT_NE(ids, iota_ids(50)) << "shuffled";
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, iota_ids(50));
}

TEST(Strategy, random_respects_the_budget_without_duplicates) {
  auto s = make_strategy("random", numbered_configs(1000), 37, 7);
  const auto ids = drain(*s, 10);
  EXPECT_EQ(ids.size(), 37u);
  EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), 37u);
  for (int64_t id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 1000);
  }
}

TEST(Strategy, random_is_deterministic_for_a_seed) {
  const auto a = drain(*make_strategy("random", numbered_configs(200), 20, 123), 6);
  const auto b = drain(*make_strategy("random", numbered_configs(200), 20, 123), 20);
  EXPECT_EQ(a, b) << "batch size must not change the sample";
  const auto c = drain(*make_strategy("random", numbered_configs(200), 20, 124), 20);
  EXPECT_NE(a, c) << "another seed, another sample";
}

TEST(Strategy, random_sample_is_pinned_for_seed_1) {
  // The draw uses only std::mt19937_64's output (fixed by the C++ standard), so this sample
  // is the same with every standard library; a change here changes every recorded run.
  const auto ids = drain(*make_strategy("random", numbered_configs(10), 0, 1), 10);
  auto again = drain(*make_strategy("random", numbered_configs(10), 0, 1), 3);
  EXPECT_EQ(ids, again);
  EXPECT_EQ(ids, (std::vector<int64_t>{8, 7, 4, 0, 2, 9, 6, 1, 3, 5}));
}

TEST(Strategy, random_is_roughly_uniform) {
  // Each of 10 configs should be first about 1/10 of the time over many seeds.
  std::vector<int> first(10, 0);
  for (uint64_t seed = 0; seed < 5000; ++seed) {
    auto s = make_strategy("random", numbered_configs(10), 1, seed);
    ++first[size_t(s->propose(1).at(0).get("ID"))];
  }
  for (int count : first) {
    EXPECT_GT(count, 400);
    EXPECT_LT(count, 600);
  }
}

TEST(Strategy, report_is_accepted_and_ignored_by_the_simple_strategies) {
  auto s = make_strategy("random", numbered_configs(4), 0, 3);
  const auto batch = s->propose(2);
  std::vector<TrialResult> results;
  for (const auto& c : batch) results.push_back({c, TrialStatus::ok, "", 1, 1, 1, 1, 1, 0});
  s->report(results);
  EXPECT_EQ(s->propose(10).size(), 2u);
}

TEST(Strategy, rejects_a_budget_above_the_limit) {
  EXPECT_NO_THROW(make_strategy("random", numbered_configs(3), kMaxBudget, 1));
  for (const char* name : {"exhaustive", "random"}) {
    try {
      make_strategy(name, numbered_configs(3), kMaxBudget + 1, 1);
      FAIL() << "no error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("budget 1000001 is over the limit of 1000000 configs"), std::string::npos)
          << msg;
    }
  }
}

TEST(Strategy, configs_hash_by_value_so_proposals_dedup_in_linear_time) {
  const KernelConfigHash hash;
  const KernelConfig a{"sgemm_simt", {{"BM", 64}, {"BN", 128}}};
  KernelConfig b = a;
  EXPECT_EQ(hash(a), hash(b));
  b.set("BN", 64);
  EXPECT_NE(hash(a), hash(b));
  std::unordered_set<KernelConfig, KernelConfigHash> seen;
  for (const auto& c : numbered_configs(100000)) seen.insert(c);
  for (const auto& c : numbered_configs(100000)) seen.insert(c);
  EXPECT_EQ(seen.size(), 100000u);
}

TEST(Strategy, unknown_name_throws_listing_the_strategies) {
  try {
    make_strategy("bayesian", numbered_configs(3), 0, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown strategy 'bayesian'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("exhaustive, random"), std::string::npos) << msg;
  }
}

TEST(Strategy, names_are_listed) {
  EXPECT_EQ(strategy_names(),
            (std::vector<std::string>{"exhaustive", "random", "model", "nearest"}));
  for (const auto& name : strategy_names()) EXPECT_NO_THROW(make_strategy(name, {}, 0, 0));
}

}  // namespace
}  // namespace tgemm
