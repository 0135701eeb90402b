// StrategyFactory: it refuses an unknown strategy up front, builds the named one past the
// family's proven candidates within the pair's budget, shares the configs out between runs
// (--devices), and gives the model strategies the trials of other shapes only.
#include "tuner/session/strategy_factory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "src/core/error.h"
#include "tests/common/session_parts.h"

namespace tgemm {
namespace {

using testing::enumerated_spaces;
using testing::named_problem;

std::vector<KernelConfig> drain(Strategy& strategy) {
  std::vector<KernelConfig> all;
  for (auto batch = strategy.propose(16); !batch.empty(); batch = strategy.propose(16))
    all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

std::set<std::string> names_of(const std::vector<KernelConfig>& configs) {
  std::set<std::string> names;
  for (const KernelConfig& c : configs) names.insert(c.canonical_name());
  return names;
}

// One family's space on sm_75 and a group of one f32 problem that it computes.
struct OneFamily {
  explicit OneFamily(const std::string& family)
      : limits(arch_limits("sm_75")),
        spaces(enumerated_spaces({family}, limits)),
        problems{named_problem("f32", 512, 512, 512)},
        group(group_by_variant(problems, spaces, limits).front()) {}

  ModelContext model() const {
    ModelContext m;
    m.family = spaces[0]->family;
    m.problems = {problems[0].problem};
    m.limits = limits;
    m.sm_count = default_sm_count(limits.arch);
    m.roofs = roofs_from({}, limits.arch, group.variant.types);
    return m;
  }
  std::shared_ptr<CandidateStrategy> candidates(const StrategyFactory& factory) const {
    return factory.candidates(group, *spaces[0], {}, {}, model());
  }
  // What the factory's exploring strategy proposes past the candidates, all of it.
  std::vector<KernelConfig> explored(const StrategyFactory& factory) const {
    const auto proven = candidates(factory);
    auto strategy = factory.exploring(group, *spaces[0], *proven,
                                      factory.context(group, *spaces[0], model(), {}));
    return drain(*strategy);
  }

  ArchLimits limits;
  std::vector<std::unique_ptr<FamilySpace>> spaces;
  std::vector<NamedProblem> problems;
  VariantGroup group;
};

StrategyOptions named(const std::string& name, uint64_t budget = 0) {
  StrategyOptions o;
  o.name = name;
  o.budget = budget;
  return o;
}

TEST(StrategyFactory, refuses_an_unknown_strategy_naming_the_accepted_ones) {
  try {
    StrategyFactory(named("annealing"), arch_limits("sm_75"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "unknown strategy 'annealing' (expected one of: exhaustive, random, model, "
                 "nearest)");
  }
  for (const std::string& name : strategy_names())
    EXPECT_NO_THROW(StrategyFactory(named(name), arch_limits("sm_75"))) << name;
}

TEST(StrategyFactory, exhaustive_proposes_the_legal_configs_past_the_candidates_in_order) {
  const OneFamily f("sgemm_simt");
  const StrategyFactory factory(named("exhaustive", 5), f.limits);
  const std::set<std::string> proven = names_of(f.candidates(factory)->candidates());
  ASSERT_FALSE(proven.empty());
  std::vector<KernelConfig> expected;
  for (const KernelConfig& c : f.spaces[0]->enumeration->legal)
    if (!proven.count(c.canonical_name()) && expected.size() < 5) expected.push_back(c);
  std::erase_if(expected, [&](const KernelConfig& c) {
    return !some_problem_runs(*f.spaces[0], f.group, c, f.limits.arch);
  });
  EXPECT_EQ(f.explored(factory), expected);
}

TEST(StrategyFactory, random_samples_its_budget_past_the_candidates_the_same_for_a_seed) {
  const OneFamily f("sgemm_simt");
  StrategyOptions options = named("random", 6);
  const StrategyFactory factory(options, f.limits);
  const auto sample = f.explored(factory);
  EXPECT_LE(sample.size(), 6u);
  EXPECT_GE(sample.size(), 1u);
  const std::set<std::string> proven = names_of(f.candidates(factory)->candidates());
  const std::set<std::string> legal = names_of(f.spaces[0]->enumeration->legal);
  for (const KernelConfig& c : sample) {
    EXPECT_FALSE(proven.count(c.canonical_name())) << c.canonical_name();
    EXPECT_TRUE(legal.count(c.canonical_name())) << c.canonical_name();
  }
  EXPECT_EQ(f.explored(StrategyFactory(options, f.limits)), sample);
  options.seed = 2;
  EXPECT_NE(f.explored(StrategyFactory(options, f.limits)), sample);
}

TEST(StrategyFactory, a_share_budget_is_of_the_legal_configs) {
  const OneFamily f("gemm_naive");  // four legal configs
  StrategyOptions options = named("exhaustive", 200);
  options.budget_fraction = 0.25;
  // One of the four, which the candidates may have taken already.
  EXPECT_LE(f.explored(StrategyFactory(options, f.limits)).size(), 1u);
  options.budget_fraction = 1;
  const StrategyFactory all(options, f.limits);
  EXPECT_EQ(f.explored(all).size() + f.candidates(all)->candidates().size(), 4u);
}

TEST(StrategyFactory, runs_sharing_the_configs_out_measure_each_exactly_once) {
  const OneFamily f("gemm_naive");
  const auto everything = [&](const StrategyFactory& factory) {
    auto measured = drain(*factory.measuring(f.group, *f.spaces[0], f.candidates(factory)));
    const auto explored = f.explored(factory);
    measured.insert(measured.end(), explored.begin(), explored.end());
    return measured;
  };
  const auto whole = everything(StrategyFactory(named("exhaustive"), f.limits));
  EXPECT_EQ(names_of(whole), names_of(f.spaces[0]->enumeration->legal));
  std::vector<std::string> shared;
  for (uint64_t index : {0, 1}) {
    StrategyOptions options = named("exhaustive");
    options.config_share = {index, 2};
    for (const KernelConfig& c : everything(StrategyFactory(options, f.limits)))
      shared.push_back(c.canonical_name());
  }
  std::sort(shared.begin(), shared.end());
  const std::set<std::string> expected = names_of(whole);
  EXPECT_EQ(shared, std::vector<std::string>(expected.begin(), expected.end()));
}

TrialRecord trial_of(const Problem& problem, const KernelConfig& config, const std::string& arch,
                     TrialStatus status, double us) {
  TrialRecord r;
  r.problem = problem;
  r.device_name = "NVIDIA T4";
  r.arch = arch;
  r.trial.config = config;
  r.trial.status = status;
  r.trial.time_median_us = us;
  return r;
}

TEST(StrategyFactory, model_strategies_learn_from_other_shapes_of_the_family_on_the_arch) {
  const OneFamily f("gemm_naive");
  const auto& legal = f.spaces[0]->enumeration->legal;
  const Problem own = f.problems[0].problem;
  const Problem other = named_problem("f32", 256, 256, 256).problem;
  const std::vector<TrialRecord> trials = {
      trial_of(other, legal[1], "sm_75", TrialStatus::ok, 10),
      trial_of(own, legal[2], "sm_75", TrialStatus::ok, 20),              // the group's own
      trial_of(other, legal[3], "sm_80", TrialStatus::ok, 30),            // another arch
      trial_of(other, legal[0], "sm_75", TrialStatus::wrong_result, 40),  // not ok
      trial_of(other, KernelConfig{"sgemm_simt", {}}, "sm_75", TrialStatus::ok, 50)};
  for (const std::string name : {"model", "nearest"}) {
    const StrategyFactory factory(named(name), f.limits);
    EXPECT_TRUE(factory.models_configs());
    const StrategyContext ctx = factory.context(f.group, *f.spaces[0], f.model(), trials);
    EXPECT_EQ(ctx.model.family, f.spaces[0]->family);
    ASSERT_EQ(ctx.prior.size(), 1u) << name;
    EXPECT_EQ(ctx.prior[0].config, legal[1]);
    EXPECT_DOUBLE_EQ(ctx.prior[0].time_us, 10);
    if (name == "nearest")
      EXPECT_EQ(ctx.nearest, std::vector<KernelConfig>{legal[1]});
    else
      EXPECT_TRUE(ctx.nearest.empty());
  }
  const StrategyFactory random(named("random"), f.limits);
  EXPECT_FALSE(random.models_configs());
  const StrategyContext ctx = random.context(f.group, *f.spaces[0], f.model(), trials);
  EXPECT_EQ(ctx.model.family, nullptr);
  EXPECT_TRUE(ctx.prior.empty());
}

}  // namespace
}  // namespace tgemm
