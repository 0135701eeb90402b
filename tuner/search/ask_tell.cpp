#include "tuner/search/ask_tell.h"

#include <unordered_set>

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

}  // namespace tgemm
