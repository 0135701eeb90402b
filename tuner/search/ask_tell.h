// The ask/tell loop that every tuning session runs: ask the strategy for a batch, measure it,
// tell it the results, and only then ask again, so a strategy can learn from each batch
// (Kernel Tuner's and KTT's searcher contract).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "tuner/search/strategy.h"

namespace tgemm {

// Measures one batch: one result per config, or more (one per problem that measured it).
using MeasureBatch = std::function<std::vector<TrialResult>(const std::vector<KernelConfig>&)>;

// Runs `strategy` to its end in batches of at most `batch_size`; returns the configs asked.
size_t run_ask_tell(Strategy& strategy, size_t batch_size, const MeasureBatch& measure);

// Measures one batch on every problem of a group: element p holds problem p's results.
using MeasureByProblem =
    std::function<std::vector<std::vector<TrialResult>>(const std::vector<KernelConfig>&)>;
// As run_ask_tell, telling each problem's results through Strategy::report_problem.
size_t run_ask_tell_by_problem(Strategy& strategy, size_t batch_size,
                               const MeasureByProblem& measure);

// `first` (a known-good start, Kernel Tuner's x0: the shipped defaults) ahead of what `inner`
// proposes, each config once (a hash set: linear in the space).
std::unique_ptr<Strategy> seeded_strategy(std::vector<KernelConfig> first,
                                          std::unique_ptr<Strategy> inner);

// `inner`'s proposals that `keep` accepts; results pass through. A refused config is neither
// measured nor counted as asked.
std::unique_ptr<Strategy> filtered(std::unique_ptr<Strategy> inner,
                                   std::function<bool(const KernelConfig&)> keep);

// Whether a config (its family and parameters, by stable hash) is share `index` of `count`.
bool in_config_share(const KernelConfig& config, uint64_t index, uint64_t count);
// `inner`'s proposals in share `index` of `count` only, so `count` sessions given the same
// strategy and seed measure its configs between them, each exactly once (identical GPUs
// sharing one tuning run). Results pass through; count <= 1 returns `inner` itself.
std::unique_ptr<Strategy> shared_out(std::unique_ptr<Strategy> inner, uint64_t index,
                                     uint64_t count);

}  // namespace tgemm
