#include "tuner/search/candidates.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "src/templates/gemm_template.h"
#include "tuner/search/ask_tell.h"

namespace tgemm {

namespace {

// Adds the model's fastest predicted configs of `legal` that run problem `p` (and are not in
// `taken`) until `have` of the candidates run it.
void add_model_picks(const std::vector<KernelConfig>& legal, const PerformanceModel& model,
                     const Problem& p, size_t have, std::unordered_set<std::string>* taken,
                     std::vector<KernelConfig>* out) {
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < legal.size(); ++i) {
    if (taken->count(legal[i].params_text())) continue;
    const double us = model.predict_us(legal[i], p);
    if (std::isfinite(us)) ranked.emplace_back(us, i);
  }
  const size_t wanted = std::min(kFewCandidates - have, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + long(wanted), ranked.end());
  for (size_t r = 0; r < wanted; ++r) {
    const KernelConfig& c = legal[ranked[r].second];
    taken->insert(c.params_text());
    out->push_back(c);
  }
}

}  // namespace

std::vector<KernelConfig> proven_candidates(const CandidateSources& sources,
                                            const AdmitConfig& admit,
                                            const std::vector<KernelConfig>& legal,
                                            const ModelContext& model) {
  const GemmTemplate& family = *model.family;
  std::vector<KernelConfig> out;
  std::unordered_set<std::string> taken;
  for (const auto* list : {&sources.served, &sources.defaults, &sources.nearest})
    for (const KernelConfig& c : *list) {
      if (c.template_name != family.name()) continue;
      std::optional<KernelConfig> admitted = admit(c);
      if (admitted && taken.insert(admitted->params_text()).second)
        out.push_back(std::move(*admitted));
    }
  const PerformanceModel ranking(model);
  for (const Problem& p : model.problems) {
    const size_t have = size_t(std::count_if(out.begin(), out.end(), [&](const KernelConfig& c) {
      return !family.unsupported_reason(c, p, model.limits.arch);
    }));
    if (have < kFewCandidates) add_model_picks(legal, ranking, p, have, &taken, &out);
  }
  return out;
}

CandidateStrategy::CandidateStrategy(std::vector<KernelConfig> candidates, size_t problems)
    : candidates_(std::move(candidates)), results_(problems) {}

std::vector<KernelConfig> CandidateStrategy::propose(size_t max_count) {
  const size_t count = std::min(max_count, candidates_.size() - next_);
  std::vector<KernelConfig> batch(candidates_.begin() + long(next_),
                                  candidates_.begin() + long(next_ + count));
  next_ += count;
  return batch;
}

void CandidateStrategy::report_problem(size_t problem, const std::vector<TrialResult>& results) {
  if (problem < results_.size())
    results_[problem].insert(results_[problem].end(), results.begin(), results.end());
}

void CandidateStrategy::report(const std::vector<TrialResult>& results) {
  if (results_.size() == 1) report_problem(0, results);
}

std::unique_ptr<Strategy> exploring_strategy(const std::string& name,
                                             std::vector<KernelConfig> legal,
                                             const CandidateStrategy& candidates, uint64_t budget,
                                             uint64_t seed, const StrategyContext& context) {
  auto taken = std::make_shared<std::unordered_set<std::string>>();
  for (const KernelConfig& c : candidates.candidates()) taken->insert(c.params_text());
  const auto not_taken = [taken](const KernelConfig& c) { return !taken->count(c.params_text()); };
  const bool learns = name == "model" || name == "nearest";
  if (!learns) std::erase_if(legal, [&](const KernelConfig& c) { return !not_taken(c); });
  std::unique_ptr<Strategy> inner = make_strategy(name, std::move(legal), budget, seed, context);
  if (learns)
    for (size_t p = 0; p < candidates.results().size(); ++p)
      inner->report_problem(p, candidates.results()[p]);
  return filtered(std::move(inner), not_taken);
}

}  // namespace tgemm
