// The tuning plan: which problems a run tunes (its shard, its listed keys), how they group into
// variants that share every cubin, which families tune each group and in what order, and each
// (variant, family) pair's budget. Pure: no database, no worker, no clock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/problem.h"
#include "tuner/input/problem_set.h"
#include "tuner/session/family_space.h"
#include "tuner/session/shard.h"

namespace tgemm {

// Problems of one variant (layout and types): they share every cubin.
struct VariantGroup {
  Problem variant;
  std::vector<const NamedProblem*> problems;
  std::vector<FamilySpace*> families;  // the spaces that compute it on the target, in order
};

// Of a shape file's problems, those of `shard` (in_shard), in the file's order.
std::vector<NamedProblem> shard_problems(const std::vector<NamedProblem>& problems,
                                         const Shard& shard);

// Of `problems`, those with the listed keys (Problem::key()), in the list's order; throws
// Error naming a key that `problems` lacks and `source`, where they came from.
std::vector<NamedProblem> listed_problems(const std::vector<NamedProblem>& problems,
                                          const std::vector<std::string>& keys,
                                          const std::string& source);

// `problems` grouped by variant, in first-seen order, each with the families of `spaces` that
// compute it on the target, those with shipped defaults for its types first (their
// known-good kernels set a best early). Throws Error naming the types, layout and arch of a
// variant no family computes, with each family's reason.
std::vector<VariantGroup> group_by_variant(const std::vector<NamedProblem>& problems,
                                           const std::vector<std::unique_ptr<FamilySpace>>& spaces,
                                           const ArchLimits& limits);

// Whether some problem of the group can run `config` (its types and layout included).
bool some_problem_runs(const FamilySpace& fs, const VariantGroup& group, const KernelConfig& config,
                       const std::string& arch);

// A pair's count cap over `legal` configs: `fraction` of them when > 0 (Budget::configs_for),
// else `configs` (0 = no cap).
uint64_t pair_config_budget(uint64_t configs, double fraction, size_t legal);

// Each pair's weight in sharing a time budget out (time_share_weight), in the order the pairs
// start (group by group, its families in order): its legal configs that some problem of its
// group can run, counted up to a full share. Every family's enumeration must be filled.
std::vector<double> pair_time_weights(const std::vector<VariantGroup>& groups,
                                      const std::string& arch);

}  // namespace tgemm
