#include "tuner/search/strategy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "src/core/error.h"
#include "src/templates/search_space.h"
#include "tuner/search/model_strategy.h"

namespace tgemm {

static_assert(kMaxBudget == SearchSpace::kMaxLegalConfigs, "a budget never exceeds the legal set");

namespace {

// Hands out a fixed order of configs in batches; the strategies differ only in the order.
class OrderedStrategy : public Strategy {
 public:
  explicit OrderedStrategy(std::vector<KernelConfig> order) : order_(std::move(order)) {}

  std::vector<KernelConfig> propose(size_t max_count) override {
    const size_t count = std::min(max_count, order_.size() - next_);
    std::vector<KernelConfig> batch(order_.begin() + long(next_),
                                    order_.begin() + long(next_ + count));
    next_ += count;
    return batch;
  }

 private:
  std::vector<KernelConfig> order_;
  size_t next_ = 0;
};

std::vector<KernelConfig> random_sample(std::vector<KernelConfig> legal, uint64_t budget,
                                        uint64_t seed) {
  const size_t take = budget == 0 ? legal.size() : size_t(std::min<uint64_t>(budget, legal.size()));
  // Partial Fisher-Yates: position i gets a uniform pick among the configs not yet taken.
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < take; ++i) {
    const size_t j = i + size_t(uniform_below(rng, legal.size() - i));
    std::swap(legal[i], legal[j]);
  }
  legal.resize(take);
  return legal;
}

}  // namespace

// mt19937_64's output is fixed by the standard; rejecting the tail keeps the draw uniform.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         std::numeric_limits<uint64_t>::max() % bound;  // reject the tail
  uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % bound;
}

std::vector<std::string> strategy_names() { return {"exhaustive", "random", "model", "nearest"}; }

void check_strategy_name(const std::string& name) {
  const std::vector<std::string> names = strategy_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    fail("unknown strategy '{}' (expected one of: {})", name, fmt::join(names, ", "));
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, std::vector<KernelConfig> legal,
                                        uint64_t budget, uint64_t seed,
                                        const StrategyContext& context) {
  if (budget > kMaxBudget)
    fail("budget {} is over the limit of {} configs (0 = the whole space)", budget, kMaxBudget);
  check_strategy_name(name);
  if (name == "exhaustive") {
    if (budget > 0 && budget < legal.size()) legal.resize(size_t(budget));
    return std::make_unique<OrderedStrategy>(std::move(legal));
  }
  if (name == "random")
    return std::make_unique<OrderedStrategy>(random_sample(std::move(legal), budget, seed));
  // "model" or "nearest"
  if (legal.empty()) return std::make_unique<OrderedStrategy>(std::move(legal));
  if (!context.model.family)
    fail("strategy '{}' needs the family and the problems it ranks configs for", name);
  return std::make_unique<ModelStrategy>(
      std::move(legal), budget, seed, PerformanceModel(context.model), context.exploration,
      name == "nearest" ? context.nearest : std::vector<KernelConfig>{}, context.prior);
}

}  // namespace tgemm
