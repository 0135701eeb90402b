#include "tuner/search/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/dispatch/kernel_selector.h"
#include "src/templates/template_registry.h"
#include "tuner/search/ask_tell.h"
#include "tuner/search/candidates.h"
#include "tuner/search/model_strategy.h"

namespace tgemm {

ReplayInput load_replay_input(TuningDb& db) { return {db.trials(), db.devices(), db.ceilings()}; }

size_t ReplayResult::within(double share) const {
  return size_t(std::count_if(problems.begin(), problems.end(), [&](const ReplayProblem& p) {
    return p.best_found_us > 0 && p.best_found_us <= p.best_recorded_us * (1 + share);
  }));
}

namespace {

// The trials of one family on one variant of the replayed device.
struct ReplayGroup {
  std::string family;
  std::vector<Problem> problems;
  std::vector<std::string> keys;
  std::vector<KernelConfig> space;  // distinct recorded configs, by their parameter text
  std::vector<std::unordered_map<std::string, const TrialRecord*>> trial;  // per problem
};

std::vector<ReplayGroup> group_trials(const std::vector<TrialRecord>& trials,
                                      const std::string& device) {
  std::map<std::pair<std::string, std::string>, ReplayGroup> groups;  // (variant, family)
  std::map<std::pair<std::string, std::string>, std::map<std::string, KernelConfig>> spaces;
  for (const TrialRecord& r : trials) {
    if (r.device_name != device) continue;
    const std::pair<std::string, std::string> id{build_variant(r.problem).functional_key(),
                                                 r.trial.config.template_name};
    ReplayGroup& g = groups[id];
    g.family = id.second;
    const std::string key = r.problem.key();
    auto at = std::find(g.keys.begin(), g.keys.end(), key);
    if (at == g.keys.end()) {
      g.keys.push_back(key);
      g.problems.push_back(r.problem);
      g.trial.emplace_back();
      at = g.keys.end() - 1;
    }
    const std::string params = r.trial.config.params_text();
    g.trial[size_t(at - g.keys.begin())].emplace(params, &r);
    spaces[id].emplace(params, r.trial.config);
  }
  std::vector<ReplayGroup> out;
  for (auto& [id, g] : groups) {
    for (auto& [params, config] : spaces[id]) g.space.push_back(config);
    out.push_back(std::move(g));
  }
  return out;
}

// Each problem of a group as a group of its own (a new shape tuned beside a database of
// the others).
std::vector<ReplayGroup> one_per_problem(std::vector<ReplayGroup> groups) {
  std::vector<ReplayGroup> out;
  for (ReplayGroup& g : groups)
    for (size_t p = 0; p < g.keys.size(); ++p)
      out.push_back({g.family, {g.problems[p]}, {g.keys[p]}, g.space, {g.trial[p]}});
  return out;
}

// The performance model of a replayed family for its group's problems on the device.
ModelContext model_context(const ReplayGroup& g, const DeviceInfo& device,
                           const ReplayInput& input) {
  ModelContext model;
  model.family = &template_named(g.family);
  model.problems = g.problems;
  model.limits = device.limits.smem_per_block_optin > 0 ? device.limits : arch_limits(device.arch);
  model.limits.arch = device.arch;
  model.sm_count = device.sm_count > 0 ? device.sm_count : default_sm_count(device.arch);
  std::vector<DeviceCeiling> mine;
  for (const DeviceCeiling& c : input.ceilings)
    if (c.device_name == device.name && c.arch == device.arch) mine.push_back(c);
  model.roofs = roofs_from(mine, device.arch, g.problems.front().types);
  return model;
}

StrategyContext replay_context(const ReplayGroup& g, const DeviceInfo& device,
                               const ReplayInput& input, const ReplayOptions& options) {
  StrategyContext ctx;
  ctx.exploration = options.exploration;
  if (options.strategy != "model" && options.strategy != "nearest") return ctx;
  ctx.model = model_context(g, device, input);
  if (options.strategy == "nearest")
    ctx.nearest = nearest_tuned_configs(g.problems, input.trials, g.family);
  // What the database knows of other shapes, as the tuner would find it there.
  for (const TrialRecord& r : input.trials)
    if (r.device_name == device.name && r.trial.config.template_name == g.family &&
        r.trial.status == TrialStatus::ok &&
        std::find(g.keys.begin(), g.keys.end(), r.problem.key()) == g.keys.end())
      ctx.prior.push_back({r.trial.config, r.problem, r.trial.time_median_us});
  return ctx;
}

}  // namespace

namespace {

std::string replayed_device(const ReplayInput& input, const std::string& wanted) {
  if (!wanted.empty()) return wanted;
  for (const TrialRecord& r : input.trials)
    if (r.trial.status == TrialStatus::ok) return r.device_name;
  fail("the database holds no ok trial to replay");
}

const DeviceInfo& device_named(const ReplayInput& input, const std::string& name) {
  for (const DeviceInfo& d : input.devices)
    if (d.name == name) return d;
  fail("no device '{}' in the database", name);
}

bool faster(const TrialResult& t, double best_us) {
  return t.status == TrialStatus::ok && t.time_median_us > 0 &&
         (best_us == 0 || t.time_median_us < best_us);
}

}  // namespace

namespace {

// The database's fastest ok trial of each problem on the device, as the dispatcher reads bests.
std::vector<BestEntry> recorded_bests(const std::vector<TrialRecord>& trials,
                                      const std::string& device) {
  std::map<std::string, BestEntry> bests;
  for (const TrialRecord& r : trials) {
    if (r.device_name != device || !faster(r.trial, 0)) continue;
    auto [it, fresh] = bests.try_emplace(r.problem.key());
    if (!fresh && r.trial.time_median_us >= it->second.trial.time_median_us) continue;
    BestEntry& e = it->second;
    e.problem = r.problem;
    e.device_name = r.device_name;
    e.arch = r.arch;
    e.config = r.trial.config;
    e.template_hash = r.template_hash;
    e.trial = r.trial;
    e.measured_with = r.measured_with;
  }
  std::vector<BestEntry> out;
  for (auto& [key, e] : bests) out.push_back(std::move(e));
  return out;
}

// A replayed family's candidates, as the tuner finds them for its group: what the database
// without the group's problems serves them, the shipped defaults of the device's arch and the
// group's types, and the nearest other shapes' fastest, each as the recorded space spells it.
CandidateStrategy replay_candidates(const ReplayGroup& g, const DeviceInfo& device,
                                    const ReplayInput& input, const ModelContext& model) {
  std::vector<BestEntry> bests;
  std::vector<TrialRecord> others;
  const auto in_group = [&](const Problem& p) {
    return std::find(g.keys.begin(), g.keys.end(), p.key()) != g.keys.end();
  };
  for (BestEntry& e : recorded_bests(input.trials, device.name))
    if (!in_group(e.problem)) bests.push_back(std::move(e));
  for (const TrialRecord& r : input.trials)
    if (r.device_name == device.name && !in_group(r.problem)) others.push_back(r);
  std::vector<DeviceCeiling> ceilings;
  for (const DeviceCeiling& c : input.ceilings)
    if (c.device_name == device.name && c.arch == device.arch) ceilings.push_back(c);
  const KernelSelector selector(std::move(bests), shipped_default_kernels(), device.arch,
                                device.sm_count, others, ceilings);
  CandidateSources sources;
  for (const Problem& p : g.problems)
    if (KernelChoice c = selector.choose(p); c.path != Selection::cublas)
      sources.served.push_back(c.config);
  for (const DefaultKernel& d : shipped_default_kernels())
    if ((d.arch == "*" || d.arch == device.arch) && d.types == g.problems.front().types)
      sources.defaults.push_back(d.config);
  sources.nearest = nearest_tuned_configs(g.problems, others, g.family, 2, kNearestPerShape);
  // The recorded space by parameter values, whatever their order in the source.
  const auto values_key = [](const KernelConfig& c) {
    auto params = c.params;
    std::sort(params.begin(), params.end());
    return KernelConfig{c.template_name, params}.params_text();
  };
  std::map<std::string, const KernelConfig*> recorded;
  for (const KernelConfig& c : g.space) recorded.emplace(values_key(c), &c);
  const AdmitConfig admit = [&](const KernelConfig& c) {
    auto it = recorded.find(values_key(c));
    return it == recorded.end() ? std::nullopt : std::optional<KernelConfig>(*it->second);
  };
  return CandidateStrategy(proven_candidates(sources, admit, g.space, model), g.problems.size());
}

// The groups in the tuner's order: by variant (with per_problem, by problem), then family.
std::vector<std::vector<const ReplayGroup*>> by_variant(const std::vector<ReplayGroup>& groups,
                                                        bool per_problem) {
  std::map<std::string, std::vector<const ReplayGroup*>> variants;
  for (const ReplayGroup& g : groups)
    variants[per_problem ? g.keys.front() : build_variant(g.problems.front()).functional_key()]
        .push_back(&g);
  std::vector<std::vector<const ReplayGroup*>> out;
  for (auto& [key, list] : variants) out.push_back(std::move(list));
  return out;
}

}  // namespace

ReplayResult replay(const ReplayInput& input, const ReplayOptions& options) {
  ReplayResult result;
  result.device = replayed_device(input, options.device);
  const DeviceInfo& dev = device_named(input, result.device);
  std::map<std::string, ReplayProblem> rows;  // by problem key, over the families
  std::vector<std::string> order;
  std::vector<ReplayGroup> groups = group_trials(input.trials, result.device);
  if (options.per_problem) groups = one_per_problem(std::move(groups));
  for (const ReplayGroup& g : groups)
    for (size_t p = 0; p < g.keys.size(); ++p) {
      if (!rows.count(g.keys[p])) order.push_back(g.keys[p]);
      ReplayProblem& row = rows[g.keys[p]];
      row.key = g.keys[p];
      for (const auto& [params, r] : g.trial[p])
        if (faster(r->trial, row.best_recorded_us)) {
          row.best_recorded_us = r->trial.time_median_us;
          row.family = g.family;
        }
    }
  // A time budget runs on a simulated clock: each trial costs what measuring it would.
  double clock = 0;
  const RunClock now = [&clock] { return clock; };
  std::deque<double> weights;  // of the exploring runs not yet started (time_share_weight)
  for (const ReplayGroup& g : groups)
    weights.push_back(time_share_weight(std::min(g.space.size(), kConfigsForAFullShare)));
  // Each batch on each problem in turn, within its share of the deadline (as the tuner).
  const auto measuring = [&](const ReplayGroup& g, bool candidate, Deadline& deadline) {
    return [&, candidate](const std::vector<KernelConfig>& batch) {
      std::vector<std::vector<TrialResult>> out(g.problems.size());
      for (size_t p = 0; p < g.problems.size(); ++p) {
        Deadline share = deadline.share_of_left(g.problems.size() - p);
        ReplayProblem& row = rows[g.keys[p]];
        for (const KernelConfig& c : batch) {
          if (share.passed() && row.best_found_us > 0) break;
          auto it = g.trial[p].find(c.params_text());
          const bool recorded = it != g.trial[p].end();
          ++row.asked;
          row.candidates += candidate;
          row.trace.push_back({c, candidate, recorded});
          clock += options.trial_overhead_s;
          if (!recorded) {
            ++row.unmeasured;
            continue;
          }
          const TrialResult& t = it->second->trial;
          clock += double(std::max(t.runs, 1)) * std::max(t.time_median_us, 0.0) * 1e-6;
          ++row.measured;
          out[p].push_back(t);
          if (faster(t, row.best_found_us)) row.best_found_us = t.time_median_us;
        }
      }
      deadline.passed();
      return out;
    };
  };
  double candidate_seconds = 0;  // not counted against a time budget (exploring_seconds)
  for (const auto& variant : by_variant(groups, options.per_problem)) {
    const double candidates_started = clock;
    std::vector<CandidateStrategy> candidates;
    for (const ReplayGroup* g : variant)
      candidates.push_back(replay_candidates(*g, dev, input, model_context(*g, dev, input)));
    for (size_t f = 0; f < variant.size(); ++f) {
      Deadline none;
      none.now = now;
      result.asked +=
          run_ask_tell_by_problem(candidates[f], options.batch, measuring(*variant[f], true, none));
    }
    candidate_seconds += clock - candidates_started;
    for (size_t f = 0; f < variant.size(); ++f) {
      const ReplayGroup& g = *variant[f];
      std::unique_ptr<Strategy> strategy = exploring_strategy(
          options.strategy, g.space, candidates[f], options.budget.configs_for(g.space.size()),
          options.seed, replay_context(g, dev, input, options));
      Deadline deadline;
      deadline.now = now;
      const double weight = weights.front();
      weights.pop_front();
      if (options.budget.seconds > 0) {
        const double after = std::accumulate(weights.begin(), weights.end(), 0.0);
        const double left = options.budget.seconds - (clock - candidate_seconds);
        deadline.at = clock + weighted_share(left, weight, after);
        strategy = time_limited(std::move(strategy), &deadline);
      }
      result.space += g.space.size();
      result.asked +=
          run_ask_tell_by_problem(*strategy, options.batch, measuring(g, false, deadline));
    }
  }
  result.seconds = clock;
  result.candidate_seconds = candidate_seconds;
  double log_sum = 0;
  for (const std::string& key : order) {
    const ReplayProblem& row = rows[key];
    if (row.best_recorded_us <= 0) continue;
    result.unmeasured += row.unmeasured;
    log_sum += std::log(row.best_found_us > 0 ? row.best_found_us / row.best_recorded_us
                                              : ReplayResult::kNothingFound);
    result.problems.push_back(row);
  }
  if (result.problems.empty()) fail("the database holds no ok trial on {}", result.device);
  result.geomean_ratio = std::exp(log_sum / double(result.problems.size()));
  return result;
}

std::string model_predictions_csv(const ReplayInput& input, const std::string& device) {
  const std::string name = replayed_device(input, device);
  const DeviceInfo& dev = device_named(input, name);
  ReplayOptions options;
  std::string out = "problem,config,predicted_us,recorded_us\n";
  for (const ReplayGroup& g : group_trials(input.trials, name)) {
    if (!find_template(g.family)) continue;
    const PerformanceModel model(replay_context(g, dev, input, options).model);
    for (size_t p = 0; p < g.keys.size(); ++p)
      for (const auto& [params, r] : g.trial[p])
        if (r->trial.status == TrialStatus::ok && r->trial.time_median_us > 0)
          out += fmt::format("{},{},{:.2f},{:.2f}\n", g.keys[p], r->trial.config.canonical_name(),
                             model.predict_us(r->trial.config, g.problems[p]),
                             r->trial.time_median_us);
  }
  return out;
}

std::string format_replay(const ReplayResult& r, const ReplayOptions& options) {
  std::string out =
      fmt::format("{:<44} {:<11} {:>11} {:>11} {:>7} {:>6} {:>10}\n", "problem", "family",
                  "recorded us", "found us", "ratio", "asked", "unmeasured");
  for (const ReplayProblem& p : r.problems) {
    const std::string found = p.best_found_us > 0 ? fmt::format("{:.1f}", p.best_found_us) : "-";
    const std::string ratio =
        p.best_found_us > 0 ? fmt::format("{:.3f}", p.best_found_us / p.best_recorded_us) : "none";
    out += fmt::format("{:<44} {:<11} {:>11.1f} {:>11} {:>7} {:>6} {:>10}\n", p.key, p.family,
                       p.best_recorded_us, found, ratio, p.asked, p.unmeasured);
  }
  out += fmt::format(
      "strategy {} (seed {}), budget {}: {} config(s) asked of {} recorded on {}; geometric "
      "mean found/recorded best {:.4f}; {} of {} problem(s) within 3%, {} within 10%; {} asked "
      "config-problem pair(s) unmeasured in the database (not counted as found)\n",
      options.strategy, options.seed, options.budget.describe(), r.asked, r.space, r.device,
      r.geomean_ratio, r.within(0.03), r.problems.size(), r.within(0.10), r.unmeasured);
  if (options.budget.seconds > 0)
    out += fmt::format(
        "simulated time {:.1f} s: {:.1f} s on the candidates, then the budget of {:g} s "
        "exploring\n",
        r.seconds, r.candidate_seconds, options.budget.seconds);
  return out;
}

}  // namespace tgemm
