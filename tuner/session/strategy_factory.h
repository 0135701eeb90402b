// StrategyFactory: the strategies a tuning run drives each (variant, family) pair with: the
// family's proven candidates first, then the configured strategy past them, each narrowed to
// the configs some problem of the group can run and to this run's share of them (--devices).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/tuning_records.h"
#include "tuner/search/candidates.h"
#include "tuner/search/strategy.h"
#include "tuner/session/family_space.h"
#include "tuner/session/shard.h"
#include "tuner/session/tuning_plan.h"

namespace tgemm {

struct StrategyOptions {
  std::string name = "random";  // make_strategy's
  uint64_t budget = 200;        // configs per pair, 0 = all the strategy proposes
  double budget_fraction = 0;   // > 0: the budget is this share of the pair's legal configs
  uint64_t seed = 1;
  double exploration = 0.1;  // model and nearest: share of the proposals drawn at random
  Shard config_share;        // count > 1: only this share of every strategy's proposals
};

class StrategyFactory {
 public:
  // Throws Error naming the accepted strategies when options.name is none of them.
  StrategyFactory(StrategyOptions options, ArchLimits limits);

  // Whether the strategy ranks configs by a model and learns from recorded trials (model,
  // nearest): context() then needs the family's model and this device's trials.
  bool models_configs() const;

  // The family's proven candidates for the group (proven_candidates): what the dispatcher
  // serves its problems untuned (`served`), the family's shipped defaults, and the fastest
  // of the two nearest tuned shapes in `other_shapes` (trials of shapes outside the group).
  std::shared_ptr<CandidateStrategy> candidates(const VariantGroup& group, const FamilySpace& fs,
                                                const std::vector<KernelConfig>& served,
                                                const std::vector<TrialRecord>& other_shapes,
                                                const ModelContext& model) const;
  // The candidates as the pair measures them, narrowed and shared out.
  std::unique_ptr<Strategy> measuring(const VariantGroup& group, const FamilySpace& fs,
                                      std::shared_ptr<CandidateStrategy> candidates) const;

  // What the exploring strategy knows besides the configs: with models_configs(), `model`,
  // the ok trials of the family on other shapes among `trials` (the device's, any arch) for
  // the model's prior, and for "nearest" the nearest tuned shapes' bests.
  StrategyContext context(const VariantGroup& group, const FamilySpace& fs, ModelContext model,
                          const std::vector<TrialRecord>& trials) const;
  // The configured strategy over the family's legal configs for the group's types, past
  // `candidates` (exploring_strategy), within the pair's budget, narrowed and shared out.
  std::unique_ptr<Strategy> exploring(const VariantGroup& group, const FamilySpace& fs,
                                      const CandidateStrategy& candidates,
                                      const StrategyContext& context) const;

 private:
  std::unique_ptr<Strategy> narrowed(const VariantGroup& group, const FamilySpace& fs,
                                     std::unique_ptr<Strategy> strategy) const;

  StrategyOptions options_;
  ArchLimits limits_;
};

}  // namespace tgemm
