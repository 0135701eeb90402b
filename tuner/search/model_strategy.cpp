#include "tuner/search/model_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_set>

namespace tgemm {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A config predicted within this share of a problem's best so far still counts as a gain:
// the model's error is about that large, so near-ties are worth measuring.
constexpr double kLogMargin = 0.15;
// Before anything is measured on a problem its "best so far" is this many times the best
// prediction, so the first picks are scored by how close they come to the predicted best.
constexpr double kLogStart = 1.4;  // log(4)
// Ridge weight of the per-feature correction, per problem of the group: one config measured
// on every problem is a single piece of evidence about its features, and a feature's effect
// differs between shapes (split-K), so the correction moves only on repeated evidence. On
// the H200 replay a weak ridge (3) did worse than no correction at all.
constexpr double kRidgePerProblem = 15.0;
// The correction never moves a prediction by more than e^1.5 (4.5x) either way.
constexpr double kMaxLogCorrection = 1.5;
constexpr size_t kMinBatch = 4;
// Configs the model cannot tell apart (the same prediction on every problem) count at this
// share of their gain once one of them was asked: the model's error makes near-ties worth
// measuring, but its blind spots (swizzle, padding, ...) must not fill a budget with copies.
constexpr double kTwinWeight = 0.5;
// Per (parameter, value) no proposal has had yet: breaks the model's ties (configs that
// differ only in what it cannot see, e.g. a swizzle) towards configs that teach the
// correction something new, instead of near-copies of one pick.
constexpr double kNovelty = 1e-4;

// Solves (A) x = b in place by Gaussian elimination with partial pivoting (A is n x n, SPD).
std::vector<double> solve(std::vector<double> a, std::vector<double> b, size_t n) {
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c])) pivot = r;
    for (size_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
    std::swap(b[c], b[pivot]);
    const double d = a[c * n + c];
    if (std::abs(d) < 1e-12) continue;
    for (size_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / d;
      if (f == 0) continue;
      for (size_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < n; ++k) s -= a[c * n + k] * x[k];
    x[c] = std::abs(a[c * n + c]) < 1e-12 ? 0 : s / a[c * n + c];
  }
  return x;
}

}  // namespace

ModelStrategy::ModelStrategy(std::vector<KernelConfig> legal, uint64_t budget, uint64_t seed,
                             PerformanceModel model, double exploration,
                             std::vector<KernelConfig> first, const std::vector<PriorTrial>& prior)
    : legal_(std::move(legal)),
      budget_(budget),
      exploration_(std::clamp(exploration, 0.0, 1.0)),
      rng_(seed),
      model_(std::move(model)),
      problems_(model_.context().problems.size()) {
  const size_t n = legal_.size();
  std::map<std::pair<std::string, int64_t>, uint32_t> feature_ids;
  log_predicted_.resize(n * problems_);
  features_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    index_.emplace(legal_[i].params_text(), i);
    const std::vector<double> us = model_.predict_all(legal_[i]);
    size_t signature = 0;
    for (size_t p = 0; p < problems_; ++p) {
      log_predicted_[i * problems_ + p] = std::log(us[p]);
      signature = signature * 1000003u + std::hash<double>{}(std::round(us[p] * 1e3));
    }
    signature_.push_back(signature);
    twins_asked_.emplace(signature, 0);
    for (const auto& param : legal_[i].params) {
      auto [it, fresh] = feature_ids.emplace(param, uint32_t(feature_ids.size()));
      features_[i].push_back(it->second);
    }
  }
  feature_count_ = feature_ids.size();
  // Other shapes' trials: their residuals against the model teach the correction before
  // anything here is measured; each shape gets its own scale slot after this group's.
  std::map<std::string, size_t> prior_slot;
  for (const PriorTrial& t : prior) {
    const double us = model_.predict_us(t.config, t.problem);
    if (!std::isfinite(us) || !(t.time_us > 0)) continue;
    std::vector<uint32_t> ids;
    for (const auto& param : t.config.params)
      if (auto it = feature_ids.find(param); it != feature_ids.end()) ids.push_back(it->second);
    auto [slot, fresh] = prior_slot.emplace(t.problem.key(), problems_ + prior_slot.size());
    prior_.push_back({SIZE_MAX, prior_features_.size(), slot->second, std::log(t.time_us / us)});
    prior_features_.push_back(std::move(ids));
  }
  feature_seen_.assign(feature_count_, false);
  correction_.assign(n, 1.0);
  log_scale_.assign(problems_ + prior_slot.size(), 0.0);
  log_current_.assign(problems_, kInf);
  asked_.assign(n, false);
  unasked_ = n;
  // A config the model says can run no problem of the group is never proposed: seen on the
  // H200, a time budget let the 90800 GEMV configs of a group of wide shapes be
  // proposed one after another, each pick a scan of them all, for minutes.
  for (size_t i = 0; i < n; ++i) {
    bool runs_one = false;
    for (size_t p = 0; p < problems_ && !runs_one; ++p)
      runs_one = std::isfinite(log_predicted_[i * problems_ + p]);
    if (!runs_one) asked_[i] = true, --unasked_;
  }
  const size_t first_cap = budget_ ? size_t((budget_ + 1) / 2) : n;
  std::unordered_set<size_t> seen;
  for (const KernelConfig& c : first) {
    const size_t i = index_of(c);
    if (i != SIZE_MAX && first_.size() < first_cap && seen.insert(i).second) first_.push_back(i);
  }
  refit();
}

size_t ModelStrategy::index_of(const KernelConfig& config) const {
  auto it = index_.find(config.params_text());
  return it == index_.end() ? SIZE_MAX : it->second;
}

double ModelStrategy::estimate_us(size_t config, size_t problem) const {
  return std::exp(log_predicted_[config * problems_ + problem] + log_scale_[problem]) *
         correction_[config];
}

std::vector<KernelConfig> ModelStrategy::propose(size_t max_count) {
  if (dirty_) refit();
  size_t count = max_count;
  if (budget_) {
    const size_t left = proposed_ < budget_ ? size_t(budget_ - proposed_) : 0;
    count = std::min({count, left, std::max(kMinBatch, size_t(budget_ + 3) / 4)});
  }
  std::vector<KernelConfig> batch;
  while (batch.size() < count && unasked_ > 0) {
    size_t pick = SIZE_MAX;
    while (next_first_ < first_.size() && pick == SIZE_MAX) {
      const size_t i = first_[next_first_++];
      if (!asked_[i]) pick = i;
    }
    // Every 1/exploration-th proposal is a uniform draw, so the budget holds that share.
    const bool explore = std::floor(double(proposed_ + 1) * exploration_) >
                         std::floor(double(proposed_) * exploration_);
    if (pick == SIZE_MAX) pick = explore ? pick_explore() : pick_exploit();
    take(pick, &batch);
  }
  return batch;
}

void ModelStrategy::take(size_t i, std::vector<KernelConfig>* batch) {
  asked_[i] = true;
  --unasked_;
  ++proposed_;
  // Until it is measured, assume the config reaches its estimate (the greedy's coverage).
  for (size_t p = 0; p < problems_; ++p)
    log_current_[p] = std::min(log_current_[p], std::log(estimate_us(i, p)));
  for (uint32_t id : features_[i]) feature_seen_[id] = true;
  ++twins_asked_[signature_[i]];
  batch->push_back(legal_[i]);
}

size_t ModelStrategy::pick_explore() {
  uint64_t nth = uniform_below(rng_, unasked_);
  for (size_t i = 0; i < legal_.size(); ++i)
    if (!asked_[i] && nth-- == 0) return i;
  return pick_exploit();  // not reached
}

double ModelStrategy::gain(size_t i) const {
  double g = 0;
  const double weight = twins_asked_.at(signature_[i]) ? kTwinWeight : 1.0;
  for (size_t p = 0; p < problems_; ++p) {
    const double est = log_predicted_[i * problems_ + p] + log_scale_[p] + std::log(correction_[i]);
    if (std::isfinite(est) && std::isfinite(log_current_[p]))
      g += weight * std::max(0.0, log_current_[p] + kLogMargin - est);
  }
  for (uint32_t id : features_[i]) g += feature_seen_[id] ? 0.0 : kNovelty;
  return g;
}

// Lazy greedy: gains only shrink as the best-so-far times fall, so a popped entry whose
// recomputed gain still tops the heap is the true maximum.
size_t ModelStrategy::pick_exploit() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end());
    auto [bound, i] = heap_.back();
    heap_.pop_back();
    if (asked_[i]) continue;
    const double g = gain(i);
    if (heap_.empty() || g >= heap_.front().first) {
      if (g > 0) return i;
      heap_.emplace_back(g, i);
      std::push_heap(heap_.begin(), heap_.end());
      break;
    }
    heap_.emplace_back(g, i);
    std::push_heap(heap_.begin(), heap_.end());
  }
  // Nothing is predicted to gain: the config closest to a gain over the group.
  size_t best = SIZE_MAX;
  double best_loss = kInf;
  for (size_t i = 0; i < legal_.size(); ++i) {
    if (asked_[i]) continue;
    double loss = 0;
    for (size_t p = 0; p < problems_; ++p) {
      const double est = std::log(estimate_us(i, p));
      loss += std::isfinite(est) && std::isfinite(log_current_[p])
                  ? std::max(0.0, est - log_current_[p])
                  : 10.0;
    }
    if (best == SIZE_MAX || loss < best_loss) best = i, best_loss = loss;
  }
  return best;
}

void ModelStrategy::report(const std::vector<TrialResult>& results) {
  if (problems_ == 1) return report_problem(0, results);
  for (const TrialResult& r : results) {
    const size_t i = index_of(r.config);
    if (i != SIZE_MAX && !asked_[i]) asked_[i] = true, --unasked_;
  }
}

void ModelStrategy::report_problem(size_t problem, const std::vector<TrialResult>& results) {
  for (const TrialResult& r : results) {
    const size_t i = index_of(r.config);
    if (i == SIZE_MAX) continue;
    if (!asked_[i]) asked_[i] = true, --unasked_;  // a seed proposed by someone else
    if (problem < problems_ && r.status == TrialStatus::ok && r.time_median_us > 0 &&
        std::isfinite(log_predicted_[i * problems_ + problem])) {
      measured_.push_back(
          {i, 0, problem, std::log(r.time_median_us) - log_predicted_[i * problems_ + problem]});
      dirty_ = true;
    }
  }
}

// Fits log(measured) = log(predicted) + scale[problem] + sum of per-(parameter, value)
// weights, alternating the problem scales (plain means) and the weights (ridge), over this
// group's measurements and the prior (other shapes' recorded trials).
void ModelStrategy::refit() {
  dirty_ = false;
  const size_t f = feature_count_, slots = log_scale_.size();
  std::vector<double> w(f, 0.0);
  std::vector<const Sample*> all;
  for (const Sample& s : prior_) all.push_back(&s);
  for (const Sample& s : measured_) all.push_back(&s);
  const auto features_of = [&](const Sample& s) -> const std::vector<uint32_t>& {
    return s.config == SIZE_MAX ? prior_features_[s.feature_row] : features_[s.config];
  };
  if (!all.empty()) {
    for (int round = 0; round < 6; ++round) {
      std::vector<double> sum(slots, 0), count(slots, 0);
      for (const Sample* s : all) {
        double fx = 0;
        for (uint32_t id : features_of(*s)) fx += w[id];
        sum[s->problem] += s->residual - fx;
        count[s->problem] += 1;
      }
      for (size_t p = 0; p < slots; ++p) log_scale_[p] = count[p] ? sum[p] / count[p] : 0;
      std::vector<double> a(f * f, 0), b(f, 0);
      for (size_t k = 0; k < f; ++k) a[k * f + k] = kRidgePerProblem * double(problems_);
      for (const Sample* s : all) {
        const double y = s->residual - log_scale_[s->problem];
        for (uint32_t r : features_of(*s)) {
          b[r] += y;
          for (uint32_t c : features_of(*s)) a[r * f + c] += 1;
        }
      }
      w = solve(std::move(a), std::move(b), f);
    }
  }
  for (size_t i = 0; i < legal_.size(); ++i) {
    double fx = 0;
    for (uint32_t id : features_[i]) fx += w[id];
    correction_[i] = std::exp(std::clamp(fx, -kMaxLogCorrection, kMaxLogCorrection));
  }
  // The best so far: measured where there is a time, else a margin over the best estimate.
  std::vector<double> best_measured(problems_, kInf);
  for (const Sample& s : measured_)
    best_measured[s.problem] = std::min(
        best_measured[s.problem], s.residual + log_predicted_[s.config * problems_ + s.problem]);
  for (size_t p = 0; p < problems_; ++p) {
    double best_estimate = kInf;
    for (size_t i = 0; i < legal_.size(); ++i)
      best_estimate = std::min(best_estimate, std::log(estimate_us(i, p)));
    log_current_[p] =
        std::isfinite(best_measured[p]) ? best_measured[p] : best_estimate + kLogStart;
  }
  rebuild_gains();
}

void ModelStrategy::rebuild_gains() {
  heap_.clear();
  for (size_t i = 0; i < legal_.size(); ++i)
    if (!asked_[i]) heap_.emplace_back(gain(i), i);
  std::make_heap(heap_.begin(), heap_.end());
}

std::vector<KernelConfig> nearest_tuned_configs(const std::vector<Problem>& problems,
                                                const std::vector<TrialRecord>& trials,
                                                const std::string& template_name, size_t neighbours,
                                                size_t per_neighbour) {
  // The ok trials of the family per tuned problem, fastest first.
  std::map<std::string, std::vector<const TrialRecord*>> by_problem;
  for (const TrialRecord& r : trials)
    if (r.trial.status == TrialStatus::ok && r.trial.time_median_us > 0 &&
        r.trial.config.template_name == template_name)
      by_problem[r.problem.key()].push_back(&r);
  for (auto& [key, list] : by_problem)
    std::stable_sort(list.begin(), list.end(), [](const TrialRecord* a, const TrialRecord* b) {
      return a->trial.time_median_us < b->trial.time_median_us;
    });
  // Per problem, its ranked list: nearest neighbour's fastest, next neighbour's fastest, ...
  std::vector<std::vector<const KernelConfig*>> ranked(problems.size());
  for (size_t q = 0; q < problems.size(); ++q) {
    const Problem& target = problems[q];
    std::vector<std::pair<double, const std::vector<const TrialRecord*>*>> near;
    for (const auto& [key, list] : by_problem) {
      const Problem& t = list.front()->problem;
      if (key == target.key() || t.types != target.types || t.op_a != target.op_a ||
          t.op_b != target.op_b)
        continue;
      const double dm = std::log(double(t.m) / double(target.m));
      const double dn = std::log(double(t.n) / double(target.n));
      const double dk = std::log(double(t.k) / double(target.k));
      near.emplace_back(dm * dm + dn * dn + dk * dk, &list);
    }
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (near.size() > neighbours) near.resize(neighbours);
    for (size_t rank = 0; rank < per_neighbour; ++rank)
      for (const auto& [distance, list] : near)
        if (rank < list->size()) ranked[q].push_back(&(*list)[rank]->trial.config);
  }
  std::vector<KernelConfig> out;
  std::unordered_set<std::string> seen;
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (const auto& list : ranked) {
      if (rank >= list.size()) continue;
      any = true;
      if (seen.insert(list[rank]->params_text()).second) out.push_back(*list[rank]);
    }
    if (!any) break;
  }
  return out;
}

}  // namespace tgemm
