// Strategy: which legal configs to try, and in what order (Kernel Tuner's idea: strategies
// behind one small ask/tell interface).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/core/kernel_config.h"
#include "src/core/trial_result.h"

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
};

// name: "exhaustive" (every legal config, in order) or "random" (a uniform sample without
// replacement, seeded). `budget` caps the number of configs proposed (0 = no cap).
// Throws Error naming the accepted strategies for any other name, and for a budget above
// kMaxBudget. Proposing every config takes time linear in `legal`.
// The random sample is the same for a seed on every platform (own bounded draw from
// std::mt19937_64, no std::uniform_int_distribution).
std::unique_ptr<Strategy> make_strategy(const std::string& name, std::vector<KernelConfig> legal,
                                        uint64_t budget, uint64_t seed);

// The names make_strategy() accepts, for --help texts and error messages.
std::vector<std::string> strategy_names();

}  // namespace tgemm
