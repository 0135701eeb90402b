// Strategy: which legal configs to try, and in what order (Kernel Tuner's idea: strategies
// behind one small ask/tell interface).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "src/core/kernel_config.h"
#include "src/core/trial_result.h"
#include "src/model/performance_model.h"

namespace tgemm {

// The largest budget: a search space keeps at most this many legal configs
// (SearchSpace::kMaxLegalConfigs), so a larger budget could never be spent.
constexpr uint64_t kMaxBudget = 1'000'000;

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Up to `max_count` configs not proposed before; empty when the strategy is done (or when
  // max_count is 0).
  virtual std::vector<KernelConfig> propose(size_t max_count) = 0;
  // Results of proposed configs, for strategies that learn from them.
  virtual void report(const std::vector<TrialResult>& results) { (void)results; }
  // The results measured on one problem of the group (`problem` indexes the problems the
  // strategy was made for, StrategyContext); strategies that model each problem need it.
  virtual void report_problem(size_t problem, const std::vector<TrialResult>& results) {
    (void)problem;
    report(results);
  }
};

// Uniform in [0, bound) from the raw 64-bit stream, the same for a seed on every platform
// (std::uniform_int_distribution's algorithm differs between standard libraries).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound);

// What the model-guided strategies know besides the legal configs: the family, the variant
// group's problems, the arch and the roofs (PerformanceModel), and for "nearest" the recorded
// bests of the nearest tuned shapes (nearest_tuned_configs), best first.
// A trial of another shape, for the model's prior correction.
struct PriorTrial {
  KernelConfig config;
  Problem problem;
  double time_us = 0;
};

struct StrategyContext {
  ModelContext model;  // model.family null: no model (exhaustive and random need none)
  std::vector<KernelConfig> nearest;
  std::vector<PriorTrial> prior;  // other shapes' ok trials of the family on this device
  double exploration = 0.1;       // share of the model's proposals drawn at random (seeded)
};

// name: "exhaustive" (every legal config, in order), "random" (a uniform sample without
// replacement, seeded), "model" (ranked by PerformanceModel, refined from each batch; see
// ModelStrategy) or "nearest" (context.nearest first, then as "model"). `budget` caps the
// number of configs proposed (0 = no cap). Throws Error naming the accepted strategies for
// any other name, for "model"/"nearest" without a family in the context (and a non-empty
// space), and for a budget above kMaxBudget. The random sample is the same for a seed on
// every platform (own bounded draw from std::mt19937_64).
std::unique_ptr<Strategy> make_strategy(const std::string& name, std::vector<KernelConfig> legal,
                                        uint64_t budget, uint64_t seed,
                                        const StrategyContext& context = {});

// The names make_strategy() accepts, for --help texts and error messages.
std::vector<std::string> strategy_names();
// Throws Error naming the accepted strategies when `name` is not one of them.
void check_strategy_name(const std::string& name);

}  // namespace tgemm
