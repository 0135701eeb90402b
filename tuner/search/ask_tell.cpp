#include "tuner/search/ask_tell.h"

#include <string>
#include <unordered_set>

#include "src/core/hash.h"

namespace tgemm {

size_t run_ask_tell(Strategy& strategy, size_t batch_size, const MeasureBatch& measure) {
  size_t asked = 0;
  for (auto batch = strategy.propose(batch_size); !batch.empty();
       batch = strategy.propose(batch_size)) {
    asked += batch.size();
    strategy.report(measure(batch));
  }
  return asked;
}

size_t run_ask_tell_by_problem(Strategy& strategy, size_t batch_size,
                               const MeasureByProblem& measure) {
  size_t asked = 0;
  for (auto batch = strategy.propose(batch_size); !batch.empty();
       batch = strategy.propose(batch_size)) {
    asked += batch.size();
    const auto per_problem = measure(batch);
    for (size_t p = 0; p < per_problem.size(); ++p) strategy.report_problem(p, per_problem[p]);
  }
  return asked;
}

namespace {

class SeededStrategy final : public Strategy {
 public:
  SeededStrategy(std::vector<KernelConfig> first, std::unique_ptr<Strategy> inner)
      : first_(std::move(first)), inner_(std::move(inner)) {}

  std::vector<KernelConfig> propose(size_t max_count) override {
    std::vector<KernelConfig> batch;
    while (next_first_ < first_.size() && batch.size() < max_count)
      take(first_[next_first_++], &batch);
    while (batch.size() < max_count) {
      auto more = inner_->propose(max_count - batch.size());
      if (more.empty()) break;
      for (auto& config : more) take(std::move(config), &batch);
    }
    return batch;
  }

  void report(const std::vector<TrialResult>& results) override { inner_->report(results); }
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override {
    inner_->report_problem(problem, results);
  }

 private:
  void take(KernelConfig config, std::vector<KernelConfig>* batch) {
    if (seen_.insert(config.params_text()).second) batch->push_back(std::move(config));
  }

  std::vector<KernelConfig> first_;
  size_t next_first_ = 0;
  std::unique_ptr<Strategy> inner_;
  std::unordered_set<std::string> seen_;
};

}  // namespace

std::unique_ptr<Strategy> seeded_strategy(std::vector<KernelConfig> first,
                                          std::unique_ptr<Strategy> inner) {
  return std::make_unique<SeededStrategy>(std::move(first), std::move(inner));
}

namespace {

class FilteredStrategy final : public Strategy {
 public:
  FilteredStrategy(std::unique_ptr<Strategy> inner, std::function<bool(const KernelConfig&)> keep)
      : inner_(std::move(inner)), keep_(std::move(keep)) {}

  // What the inner strategy proposes, less what `keep_` refuses: asks it again until the
  // batch is full or it is done.
  std::vector<KernelConfig> propose(size_t max_count) override {
    std::vector<KernelConfig> batch;
    while (batch.size() < max_count) {
      auto more = inner_->propose(max_count - batch.size());
      if (more.empty()) break;
      for (auto& config : more)
        if (keep_(config)) batch.push_back(std::move(config));
    }
    return batch;
  }

  void report(const std::vector<TrialResult>& results) override { inner_->report(results); }
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override {
    inner_->report_problem(problem, results);
  }

 private:
  std::unique_ptr<Strategy> inner_;
  std::function<bool(const KernelConfig&)> keep_;
};

}  // namespace

std::unique_ptr<Strategy> filtered(std::unique_ptr<Strategy> inner,
                                   std::function<bool(const KernelConfig&)> keep) {
  return std::make_unique<FilteredStrategy>(std::move(inner), std::move(keep));
}

std::unique_ptr<Strategy> shared_out(std::unique_ptr<Strategy> inner, uint64_t index,
                                     uint64_t count) {
  if (count <= 1) return inner;
  return filtered(std::move(inner), [index, count](const KernelConfig& config) {
    return in_config_share(config, index, count);
  });
}

bool in_config_share(const KernelConfig& config, uint64_t index, uint64_t count) {
  if (count <= 1) return true;
  const std::string hash = stable_hash(config.template_name + " " + config.params_text());
  return std::stoull(hash, nullptr, 16) % count == index;
}

}  // namespace tgemm
