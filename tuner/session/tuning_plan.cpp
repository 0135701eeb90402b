#include "tuner/session/tuning_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "src/core/error.h"
#include "tuner/search/budget.h"

namespace tgemm {

std::vector<NamedProblem> shard_problems(const std::vector<NamedProblem>& problems,
                                         const Shard& shard) {
  std::vector<NamedProblem> kept;
  std::copy_if(problems.begin(), problems.end(), std::back_inserter(kept),
               [&](const NamedProblem& p) { return in_shard(p.problem.key(), shard); });
  return kept;
}

std::vector<NamedProblem> listed_problems(const std::vector<NamedProblem>& problems,
                                          const std::vector<std::string>& keys,
                                          const std::string& source) {
  std::vector<NamedProblem> listed;
  for (const std::string& key : keys) {
    auto it = std::find_if(problems.begin(), problems.end(),
                           [&](const NamedProblem& p) { return p.problem.key() == key; });
    if (it == problems.end())
      fail("problem {} is not among the {} problem(s) of {} this run tunes", key, problems.size(),
           source);
    listed.push_back(*it);
  }
  return listed;
}

std::vector<VariantGroup> group_by_variant(const std::vector<NamedProblem>& problems,
                                           const std::vector<std::unique_ptr<FamilySpace>>& spaces,
                                           const ArchLimits& limits) {
  std::vector<VariantGroup> groups;
  for (const NamedProblem& named : problems) {
    const Problem variant = build_variant(named.problem);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const VariantGroup& g) {
      return g.variant.functional_key() == variant.functional_key();
    });
    if (it == groups.end()) it = groups.insert(groups.end(), VariantGroup{variant, {}, {}});
    it->problems.push_back(&named);
  }
  for (VariantGroup& g : groups) {
    std::vector<std::string> why_not;
    for (const auto& fs : spaces) {
      auto why = fs->space.types_unsupported(g.variant.types, limits.arch);
      if (!why) why = fs->family->types_unsupported(g.variant.types, limits.arch);
      if (why)
        why_not.push_back(*why);
      else
        g.families.push_back(fs.get());
    }
    if (g.families.empty())
      fail("no template family computes {} ({} layout) on {}: {}", g.variant.types.name(),
           g.variant.layout(), limits.arch, fmt::join(why_not, "; "));
    // A slow family's configs are cut off after two warm runs once a best is set, instead of
    // being timed in full.
    std::stable_sort(g.families.begin(), g.families.end(), [&](FamilySpace* a, FamilySpace* b) {
      return !default_configs(*a, g.variant.types, limits).empty() &&
             default_configs(*b, g.variant.types, limits).empty();
    });
  }
  return groups;
}

bool some_problem_runs(const FamilySpace& fs, const VariantGroup& group, const KernelConfig& config,
                       const std::string& arch) {
  return std::any_of(group.problems.begin(), group.problems.end(), [&](const NamedProblem* p) {
    return !fs.family->unsupported_reason(config, p->problem, arch);
  });
}

uint64_t pair_config_budget(uint64_t configs, double fraction, size_t legal) {
  return fraction > 0 ? Budget{0, fraction, 0}.configs_for(legal) : configs;
}

std::vector<double> pair_time_weights(const std::vector<VariantGroup>& groups,
                                      const std::string& arch) {
  std::vector<double> weights;
  for (const VariantGroup& group : groups)
    for (const FamilySpace* fs : group.families) {
      size_t runnable = 0;
      for (const KernelConfig& c : fs->enumeration->legal) {
        if (runnable == kConfigsForAFullShare) break;
        runnable += some_problem_runs(*fs, group, c, arch);
      }
      weights.push_back(time_share_weight(runnable));
    }
  return weights;
}

}  // namespace tgemm
