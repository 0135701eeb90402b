// The tuning plan: which problems a run tunes (shard, listed keys), how they group into
// variants with the families that compute each, and each pair's count and time budget.
#include "tuner/session/tuning_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/core/error.h"
#include "tests/common/session_parts.h"
#include "tuner/search/budget.h"

namespace tgemm {
namespace {

using testing::enumerated_spaces;
using testing::family_names;
using testing::named_problem;

std::vector<NamedProblem> some_problems() {
  std::vector<NamedProblem> problems;
  for (int64_t m : {64, 96, 128, 160, 192, 224, 256, 288}) {
    problems.push_back(named_problem("f32", m, 64, 64));
    problems.push_back(named_problem("f16", m, 64, 64));
  }
  return problems;
}

std::vector<std::string> keys_of(const std::vector<NamedProblem>& problems) {
  std::vector<std::string> keys;
  for (const NamedProblem& p : problems) keys.push_back(p.problem.key());
  return keys;
}

TEST(TuningPlan, shards_split_the_problems_in_file_order_each_into_one) {
  const auto problems = some_problems();
  std::vector<std::string> seen;
  for (uint64_t i = 0; i < 3; ++i) {
    const auto kept = shard_problems(problems, Shard{i, 3});
    for (const NamedProblem& p : kept) EXPECT_TRUE(in_shard(p.problem.key(), Shard{i, 3}));
    // File order within the shard.
    const auto keys = keys_of(kept);
    const auto all = keys_of(problems);
    for (size_t j = 1; j < keys.size(); ++j)
      EXPECT_LT(std::find(all.begin(), all.end(), keys[j - 1]),
                std::find(all.begin(), all.end(), keys[j]));
    seen.insert(seen.end(), keys.begin(), keys.end());
  }
  std::sort(seen.begin(), seen.end());
  auto all = keys_of(problems);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(seen, all);
  EXPECT_EQ(shard_problems(problems, Shard{}).size(), problems.size());
}

TEST(TuningPlan, listed_problems_come_in_the_lists_order) {
  const auto problems = some_problems();
  const std::vector<std::string> keys = {problems[5].problem.key(), problems[0].problem.key()};
  EXPECT_EQ(keys_of(listed_problems(problems, keys, "shapes.yaml")), keys);
}

TEST(TuningPlan, a_listed_key_the_problems_lack_is_an_error_naming_it_and_the_file) {
  try {
    listed_problems(some_problems(), {"no-such-problem"}, "shapes.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-problem"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shapes.yaml"), std::string::npos) << e.what();
  }
}

TEST(TuningPlan, groups_problems_by_variant_in_first_seen_order_with_the_families_computing_it) {
  const ArchLimits limits = arch_limits("sm_75");
  const auto spaces = enumerated_spaces({"gemm_naive", "gemm_mma"}, limits);
  const auto problems = some_problems();
  const auto groups = group_by_variant(problems, spaces, limits);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].variant.types.name(), "f32");
  EXPECT_EQ(groups[1].variant.types.name(), "f16");
  for (const VariantGroup& g : groups) {
    EXPECT_EQ(g.problems.size(), 8u);
    for (const NamedProblem* p : g.problems) EXPECT_EQ(p->problem.types, g.variant.types);
  }
  // gemm_mma computes no f32 (only tf32 and f32x3, from sm_80); for f16 its shipped defaults
  // put it ahead of gemm_naive, which ships none.
  EXPECT_EQ(family_names(groups[0]), std::vector<std::string>{"gemm_naive"});
  EXPECT_EQ(family_names(groups[1]), (std::vector<std::string>{"gemm_mma", "gemm_naive"}));
}

TEST(TuningPlan, families_with_shipped_defaults_for_the_types_go_first_in_the_given_order) {
  const ArchLimits limits = arch_limits("sm_80");
  const auto spaces = enumerated_spaces({"gemm_naive", "sgemm_simt", "sgemm_warp"}, limits);
  const std::vector<NamedProblem> problems = {named_problem("f32", 512, 512, 512)};
  const auto groups = group_by_variant(problems, spaces, limits);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(family_names(groups[0]),
            (std::vector<std::string>{"sgemm_simt", "sgemm_warp", "gemm_naive"}));
}

TEST(TuningPlan, a_variant_no_family_computes_is_an_error_naming_types_layout_and_arch) {
  const ArchLimits limits = arch_limits("sm_75");
  const auto spaces = enumerated_spaces({"gemm_mma"}, limits);
  const std::vector<NamedProblem> problems = {named_problem("bf16", 64, 64, 64)};
  try {
    group_by_variant(problems, spaces, limits);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no template family computes bf16 (NN layout) on sm_75"), std::string::npos)
        << what;
  }
}

TEST(TuningPlan, a_share_budget_counts_the_legal_configs_and_a_count_is_taken_as_it_is) {
  EXPECT_EQ(pair_config_budget(200, 0, 1000), 200u);
  EXPECT_EQ(pair_config_budget(0, 0, 1000), 0u);
  EXPECT_EQ(pair_config_budget(200, 0.5, 1000), 500u);
  EXPECT_EQ(pair_config_budget(200, 0.1, 7), (Budget{0, 0.1, 0}.configs_for(7)));
}

TEST(TuningPlan, time_weights_follow_the_pairs_and_count_runnable_configs_up_to_a_full_share) {
  const ArchLimits limits = arch_limits("sm_75");
  const auto spaces = enumerated_spaces({"gemm_naive", "sgemm_simt"}, limits);
  const auto problems = some_problems();
  const auto groups = group_by_variant(problems, spaces, limits);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(family_names(groups[0]), (std::vector<std::string>{"sgemm_simt", "gemm_naive"}));
  ASSERT_EQ(family_names(groups[1]), std::vector<std::string>{"gemm_naive"});
  // gemm_naive's four configs all run these shapes; sgemm_simt has more than a full share.
  ASSERT_EQ(spaces[0]->enumeration->legal.size(), 4u);
  const double naive = time_share_weight(4);
  EXPECT_EQ(pair_time_weights(groups, limits.arch), (std::vector<double>{1.0, naive, naive}));
}

}  // namespace
}  // namespace tgemm
