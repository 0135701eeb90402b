// ModelStrategy: ranks a whole legal space with PerformanceModel for every problem of a
// variant group and proposes, greedily, the config that most lowers the group's predicted
// best times (sum over problems of log time), plus a seeded share of random exploration.
// After each batch it refits a correction of the model from what was measured and re-ranks.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/core/tuning_records.h"
#include "src/model/performance_model.h"
#include "tuner/search/strategy.h"

namespace tgemm {

class ModelStrategy final : public Strategy {
 public:
  // `prior`: trials of other shapes (same family and device) that teach the correction what
  // the model cannot see (vector widths, padding, ...) before anything here is measured.
  // `first`: configs to propose before the model's own picks (the nearest shapes' bests);
  // those outside `legal` are dropped, at most half the budget is spent on them.
  ModelStrategy(std::vector<KernelConfig> legal, uint64_t budget, uint64_t seed,
                PerformanceModel model, double exploration, std::vector<KernelConfig> first = {},
                const std::vector<PriorTrial>& prior = {});

  // Returns fewer than `max_count` when a budget is set, about a quarter of it at a time, so
  // the model is refined a few times within the budget.
  std::vector<KernelConfig> propose(size_t max_count) override;
  // Without a problem index a result can only be used when the group has one problem.
  void report(const std::vector<TrialResult>& results) override;
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override;

  // The current estimate (model x fitted correction x the problem's scale), microseconds.
  double estimate_us(size_t config, size_t problem) const;
  // The fitted correction of one config (1 before anything was measured).
  double correction(size_t config) const { return correction_[config]; }
  size_t index_of(const KernelConfig& config) const;  // SIZE_MAX when not in the space

 private:
  void refit();
  void rebuild_gains();
  double gain(size_t config) const;
  size_t pick_exploit();
  size_t pick_explore();
  void take(size_t config, std::vector<KernelConfig>* batch);

  std::vector<KernelConfig> legal_;
  std::unordered_map<std::string, size_t> index_;  // params_text -> position in legal_
  uint64_t budget_;
  double exploration_;
  std::mt19937_64 rng_;
  PerformanceModel model_;
  size_t problems_;
  std::vector<double> log_predicted_;            // [config * problems_ + problem]; +inf: cannot run
  std::vector<std::vector<uint32_t>> features_;  // per config: one id per (parameter, value)
  size_t feature_count_ = 0;
  std::vector<bool> feature_seen_;  // per feature: in a proposal already
  std::vector<size_t> signature_;   // per config: hash of its predictions (twins share it)
  std::unordered_map<size_t, size_t> twins_asked_;  // signature -> configs asked
  std::vector<double> correction_;                  // per config, exp(fitted log correction)
  std::vector<double> log_scale_;    // per problem: measured over predicted, geometric mean
  std::vector<double> log_current_;  // per problem: best measured (or estimated) log time
  std::vector<bool> asked_;
  std::vector<size_t> first_;  // indices to propose first
  size_t next_first_ = 0;
  size_t proposed_ = 0;  // this strategy's own proposals (the budget's count)
  size_t unasked_ = 0;
  struct Sample {
    size_t config;       // SIZE_MAX: a prior trial, its features in prior_features_
    size_t feature_row;  // prior trials only
    size_t problem;      // scale slot: this group's problems, then the prior's shapes
    double residual;     // log(measured / predicted)
  };
  std::vector<Sample> measured_, prior_;
  std::vector<std::vector<uint32_t>> prior_features_;
  bool dirty_ = false;                           // measured since the last refit
  std::vector<std::pair<double, size_t>> heap_;  // lazy greedy: (gain bound, config)
};

// For each problem (same variant: types and layout), the ok-trial configs of `template_name`
// recorded on the nearest tuned shapes in log(m, n, k) distance, `per_neighbour` fastest of
// each of the `neighbours` nearest, interleaved by rank over the problems, each once. A
// problem's own key is skipped (leave-one-out; its trials are already recorded anyway).
std::vector<KernelConfig> nearest_tuned_configs(const std::vector<Problem>& problems,
                                                const std::vector<TrialRecord>& trials,
                                                const std::string& template_name,
                                                size_t neighbours = 2, size_t per_neighbour = 2);

}  // namespace tgemm
