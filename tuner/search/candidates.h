// Proven candidates: the configs of a family that every problem of a variant measures before
// any budget (a count, a share or a time) is spent exploring: what an untuned call is served,
// the shipped defaults, the nearest tuned shapes' fastest, and a few of the model's picks for
// each problem the others leave short. A tuned problem then never lacks what an untuned one
// gets, nor a family that computes it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/core/kernel_config.h"
#include "src/core/trial_result.h"
#include "src/model/performance_model.h"
#include "tuner/search/strategy.h"

namespace tgemm {

// Where a family's candidates come from, any family's configs (each source keeps its own).
struct CandidateSources {
  std::vector<KernelConfig> served;    // what the dispatcher serves the problems untuned
  std::vector<KernelConfig> defaults;  // the shipped default lines of the arch and types
  std::vector<KernelConfig> nearest;   // the nearest tuned shapes' fastest (nearest_tuned_configs)
};

// Of a family's configs, each problem is given at least this many that can run it.
constexpr size_t kFewCandidates = 3;
// Of each of the two nearest tuned shapes, this many of its fastest configs per family.
constexpr size_t kNearestPerShape = 1;

// A config as the family's space spells it (its parameters in the space's order), or nullopt
// when the space does not hold it legally for the variant.
using AdmitConfig = std::function<std::optional<KernelConfig>(const KernelConfig&)>;

// The sources' configs of `model.family` (served, then defaults, then nearest), each once, as
// `admit` spells them (those it refuses left out); then, for each problem that fewer than
// kFewCandidates of them can run, the model's fastest predicted of `legal` that run it until it
// has that many (or `legal` has no more).
std::vector<KernelConfig> proven_candidates(const CandidateSources& sources,
                                            const AdmitConfig& admit,
                                            const std::vector<KernelConfig>& legal,
                                            const ModelContext& model);

// The candidates as a strategy: proposes them in order, and keeps what each problem measured
// of them (results()) for the strategy that explores after them.
class CandidateStrategy final : public Strategy {
 public:
  CandidateStrategy(std::vector<KernelConfig> candidates, size_t problems);
  std::vector<KernelConfig> propose(size_t max_count) override;
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override;
  void report(const std::vector<TrialResult>& results) override;
  const std::vector<KernelConfig>& candidates() const { return candidates_; }
  // Per problem, every result told so far.
  const std::vector<std::vector<TrialResult>>& results() const { return results_; }

 private:
  std::vector<KernelConfig> candidates_;
  size_t next_ = 0;
  std::vector<std::vector<TrialResult>> results_;
};

// make_strategy(name, ...) for exploring past the candidates: it never proposes one, a sample
// (random, exhaustive) draws its budget from the other configs, and a learning strategy
// (model, nearest) is told what each problem measured of them before it is asked.
std::unique_ptr<Strategy> exploring_strategy(const std::string& name,
                                             std::vector<KernelConfig> legal,
                                             const CandidateStrategy& candidates, uint64_t budget,
                                             uint64_t seed, const StrategyContext& context);

}  // namespace tgemm
