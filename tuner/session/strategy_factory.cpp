#include "tuner/session/strategy_factory.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "tuner/search/ask_tell.h"
#include "tuner/search/model_strategy.h"

namespace tgemm {
namespace {

// A strategy owned elsewhere, for the pipeline that takes ownership of the one it runs.
class Forwarding final : public Strategy {
 public:
  explicit Forwarding(std::shared_ptr<Strategy> inner) : inner_(std::move(inner)) {}
  std::vector<KernelConfig> propose(size_t max_count) override {
    return inner_->propose(max_count);
  }
  void report(const std::vector<TrialResult>& results) override { inner_->report(results); }
  void report_problem(size_t problem, const std::vector<TrialResult>& results) override {
    inner_->report_problem(problem, results);
  }

 private:
  std::shared_ptr<Strategy> inner_;
};

std::vector<Problem> problems_of(const VariantGroup& group) {
  std::vector<Problem> problems;
  for (const NamedProblem* p : group.problems) problems.push_back(p->problem);
  return problems;
}

bool in_group(const VariantGroup& group, const Problem& problem) {
  return std::any_of(group.problems.begin(), group.problems.end(),
                     [&](const NamedProblem* p) { return p->problem.key() == problem.key(); });
}

}  // namespace

StrategyFactory::StrategyFactory(StrategyOptions options, ArchLimits limits)
    : options_(std::move(options)), limits_(std::move(limits)) {
  check_strategy_name(options_.name);
}

bool StrategyFactory::models_configs() const {
  return options_.name == "model" || options_.name == "nearest";
}

std::shared_ptr<CandidateStrategy> StrategyFactory::candidates(
    const VariantGroup& group, const FamilySpace& fs, const std::vector<KernelConfig>& served,
    const std::vector<TrialRecord>& other_shapes, const ModelContext& model) const {
  const std::vector<Problem> problems = problems_of(group);
  CandidateSources sources;
  sources.served = served;
  sources.defaults = default_configs(fs, group.variant.types, limits_);
  sources.nearest =
      nearest_tuned_configs(problems, other_shapes, fs.space.template_name(), 2, kNearestPerShape);
  const AdmitConfig admit = [this, &fs, &group](const KernelConfig& c) {
    return admitted_config(fs, c, group.variant.types, limits_);
  };
  std::vector<KernelConfig> kept;
  const std::vector<KernelConfig>& legal =
      legal_for_types(fs, group.variant.types, limits_.arch, &kept);
  return std::make_shared<CandidateStrategy>(proven_candidates(sources, admit, legal, model),
                                             problems.size());
}

std::unique_ptr<Strategy> StrategyFactory::measuring(
    const VariantGroup& group, const FamilySpace& fs,
    std::shared_ptr<CandidateStrategy> candidates) const {
  return narrowed(group, fs, std::make_unique<Forwarding>(std::move(candidates)));
}

StrategyContext StrategyFactory::context(const VariantGroup& group, const FamilySpace& fs,
                                         ModelContext model,
                                         const std::vector<TrialRecord>& trials) const {
  StrategyContext ctx;
  ctx.exploration = options_.exploration;
  if (!models_configs()) return ctx;
  ctx.model = std::move(model);
  std::vector<TrialRecord> family_trials;
  for (const TrialRecord& r : trials)
    if (r.arch == limits_.arch && r.trial.config.template_name == fs.space.template_name())
      family_trials.push_back(r);
  for (const TrialRecord& r : family_trials)
    if (!in_group(group, r.problem) && r.trial.status == TrialStatus::ok)
      ctx.prior.push_back({r.trial.config, r.problem, r.trial.time_median_us});
  if (options_.name == "nearest") {
    for (const KernelConfig& c :
         nearest_tuned_configs(ctx.model.problems, family_trials, fs.space.template_name())) {
      KernelConfig ordered = in_space_order(fs, c);
      if (!ordered.params.empty() && !fs.space.rejection(ordered, limits_))
        ctx.nearest.push_back(std::move(ordered));
    }
  }
  return ctx;
}

std::unique_ptr<Strategy> StrategyFactory::exploring(const VariantGroup& group,
                                                     const FamilySpace& fs,
                                                     const CandidateStrategy& candidates,
                                                     const StrategyContext& context) const {
  std::vector<KernelConfig> kept;
  const std::vector<KernelConfig>& legal =
      legal_for_types(fs, group.variant.types, limits_.arch, &kept);
  const uint64_t budget =
      pair_config_budget(options_.budget, options_.budget_fraction, legal.size());
  std::unique_ptr<Strategy> strategy =
      exploring_strategy(options_.name, legal, candidates, budget, options_.seed, context);
  spdlog::info("{} {} for {}: {} legal config(s), strategy '{}' past the candidates",
               fs.family->name(), group.variant.types.name(), group.variant.layout(), legal.size(),
               options_.name);
  return narrowed(group, fs, std::move(strategy));
}

std::unique_ptr<Strategy> StrategyFactory::narrowed(const VariantGroup& group,
                                                    const FamilySpace& fs,
                                                    std::unique_ptr<Strategy> strategy) const {
  // A config that no problem of the group can run (a small side wider than a GEMV's ROWS, a
  // parameter this layout's loop ignores) would be compiled only to be refused. It is left
  // out after the strategy asks, not before, so what the strategy asks (its random sample,
  // the shares of --shard and --devices) stays what the seed and the space give.
  strategy = filtered(std::move(strategy), [this, &fs, &group](const KernelConfig& config) {
    return some_problem_runs(fs, group, config, limits_.arch);
  });
  // Identical GPUs share the configs out (--devices): this run measures its share.
  return shared_out(std::move(strategy), options_.config_share.index, options_.config_share.count);
}

}  // namespace tgemm
