#include "src/dispatch/kernel_selector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/templates/template_registry.h"

namespace tgemm {

extern const char kDefaultKernelsText[];  // generated from configs/default_kernels.txt

std::vector<DefaultKernel> parse_default_kernels(const std::string& text) {
  std::vector<DefaultKernel> out;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string arch, types, templ, params, extra;
    if (!(fields >> arch)) continue;  // blank or comment
    if (!(fields >> types >> templ >> params) || (fields >> extra))
      fail("default kernels line {}: expected 'arch dtype template params'", number);
    if (arch != "*") arch_number(arch);
    out.push_back({arch, parse_gemm_types(types), KernelConfig::from_params_text(templ, params)});
  }
  return out;
}

const std::vector<DefaultKernel>& shipped_default_kernels() {
  static const std::vector<DefaultKernel> table = parse_default_kernels(kDefaultKernelsText);
  return table;
}

namespace {

// The launch rules alone: the family is registered and accepts the problem.
bool launchable(const KernelConfig& config, const Problem& problem, const std::string& arch) {
  const GemmTemplate* family = find_template(config.template_name);
  return family && !family->unsupported_reason(config, problem, arch);
}

TileShape tile_of(const KernelConfig& config) {
  return template_named(config.template_name).tile(config);
}

}  // namespace

bool can_run(const KernelConfig& config, const Problem& problem, const std::string& arch) {
  if (!launchable(config, problem, arch)) return false;
  const TileShape t = tile_of(config);
  const int64_t k_tiles = (problem.k + t.k - 1) / t.k;
  return t.split_k <= std::max<int64_t>(1, k_tiles);
}

KernelSelector::KernelSelector(std::vector<BestEntry> tuned, std::vector<DefaultKernel> defaults,
                               std::string arch, int sm_count,
                               const std::vector<TrialRecord>& measured)
    : tuned_(std::move(tuned)),
      defaults_(std::move(defaults)),
      arch_(std::move(arch)),
      sm_count_(sm_count) {
  for (const TrialRecord& r : measured) {
    if (r.trial.status != TrialStatus::ok || r.trial.time_median_us <= 0) continue;
    measured_[r.problem.key()].push_back({r.trial.config, r.template_hash, r.trial.time_median_us});
  }
  // Without recorded trials, each tuned problem's best is its one measurement.
  for (const BestEntry& e : tuned_) {
    auto& list = measured_[e.problem.key()];
    if (list.empty()) list.push_back({e.config, e.template_hash, e.trial.time_median_us});
  }
}

namespace {

// Blocks a config's main kernel launches for a problem (split-K slices included), from the
// family's own launch plan: a family may cut K by the problem's size (the GEMV family's
// slices). Call only for a config that can run the problem.
int64_t launched_blocks(const KernelConfig& config, const Problem& problem) {
  const LaunchPlan plan = template_named(config.template_name).plan_launch(config, problem);
  for (const KernelLaunch& l : plan)
    if (l.entry == 0) return int64_t(l.grid[0]) * l.grid[1] * l.grid[2];
  const TileShape t = tile_of(config);
  return ((problem.m + t.m - 1) / t.m) * ((problem.n + t.n - 1) / t.n) * t.split_k;
}

// Share of a config's padded output tiles that the problem's M x N fills (1: no waste).
double tile_fill(const KernelConfig& config, const Problem& problem) {
  const TileShape t = tile_of(config);
  const int64_t bm = t.m, bn = t.n;
  const int64_t padded_m = (problem.m + bm - 1) / bm * bm;  // whole tiles
  const int64_t padded_n = (problem.n + bn - 1) / bn * bn;
  return double(problem.m) / double(padded_m) * double(problem.n) / double(padded_n);
}

}  // namespace

double KernelSelector::padded_work(const KernelConfig& config, const Problem& problem) const {
  const TileShape t = tile_of(config);
  const int64_t resident = std::max<int64_t>(1, sm_count_) * t.blocks_per_sm;
  const int64_t waves = (launched_blocks(config, problem) + resident - 1) / resident;
  const int64_t k_tiles_per_slice = ((problem.k + t.k - 1) / t.k + t.split_k - 1) / t.split_k;
  return double(waves) * double(t.m * t.n) * double(k_tiles_per_slice * t.k);
}

KernelChoice KernelSelector::choose(const Problem& problem) const {
  const std::string key = problem.key();
  // The tuned best was measured correct and fastest on this very problem: only the launch
  // rules can refuse it (can_run's "sensible" split-K check is for kernels never run here).
  for (const BestEntry& e : tuned_) {
    if (e.problem.key() == key && launchable(e.config, problem, arch_))
      return {Selection::exact, e.config, e.template_hash, key};
  }
  // The kNeighbours tuned problems of the same types and layout nearest in log(M, N, K)
  // (other alignments pay kAlignmentPenalty: their kernels chose vector widths for them).
  constexpr double kAlignmentPenalty = 2.0;
  constexpr size_t kNeighbours = 2;
  std::vector<std::pair<double, const BestEntry*>> near;
  for (const BestEntry& e : tuned_) {
    const Problem& t = e.problem;
    if (t.types != problem.types || t.op_a != problem.op_a || t.op_b != problem.op_b) continue;
    const double dm = std::log(double(t.m) / double(problem.m));
    const double dn = std::log(double(t.n) / double(problem.n));
    const double dk = std::log(double(t.k) / double(problem.k));
    const bool same_alignment = t.align_a == problem.align_a && t.align_b == problem.align_b &&
                                t.align_c == problem.align_c;
    near.emplace_back(dm * dm + dn * dn + dk * dk + (same_alignment ? 0 : kAlignmentPenalty), &e);
  }
  std::sort(near.begin(), near.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (near.size() > kNeighbours) near.resize(kNeighbours);
  // Every config that can run here and ran well on those neighbours (within kGoodThere of
  // the fastest of those there) predicts its time here: its measured time scaled by the work it
  // would do here over the work it did there, counted in whole waves of padded tiles, so tile waste
  // and wave quantisation carry over. The fastest wins. A config that was slow there is left out:
  // the work ratio cannot tell memory-bound from compute-bound, and let slow kernels with small
  // tiles (the naive one) win on paper.
  constexpr double kGoodThere = 1.5;
  const Measurement* chosen = nullptr;
  std::string chosen_from;
  double best_us = std::numeric_limits<double>::infinity();
  for (const auto& [score, e] : near) {
    auto it = measured_.find(e->problem.key());
    if (it == measured_.end()) continue;
    std::vector<const Measurement*> runnable;  // here: vector widths, split-K against K
    double fastest_there = std::numeric_limits<double>::infinity();
    for (const Measurement& m : it->second) {
      if (!can_run(m.config, problem, arch_)) continue;
      runnable.push_back(&m);
      fastest_there = std::min(fastest_there, m.time_us);
    }
    for (const Measurement* mp : runnable) {
      const Measurement& m = *mp;
      if (m.time_us > kGoodThere * fastest_there) continue;
      const double predicted =
          m.time_us * padded_work(m.config, problem) / padded_work(m.config, e->problem);
      if (predicted < best_us) {
        best_us = predicted;
        chosen = &m;
        chosen_from = e->problem.key();
      }
    }
  }
  if (chosen) return {Selection::nearest, chosen->config, chosen->template_hash, chosen_from};
  if (const KernelConfig* d = choose_default(problem))
    return {Selection::fallback_default, *d, "", ""};
  return {Selection::cublas, {}, "", ""};
}

std::optional<KernelChoice> KernelSelector::faster_3xtf32(const Problem& problem,
                                                          Problem* f32x3_problem) const {
  if (problem.types != GemmTypes{}) return std::nullopt;
  Problem accurate = problem;
  accurate.types.compute = ComputeType::f32x3;
  const std::string f32_key = problem.key(), f32x3_key = accurate.key();
  const BestEntry *ffma = nullptr, *tensor = nullptr;
  for (const BestEntry& e : tuned_) {
    const std::string key = e.problem.key();
    if (key == f32_key) ffma = &e;
    if (key == f32x3_key) tensor = &e;
  }
  // Both measured on this GPU (the database keeps ok trials with a time only), and faster.
  if (!ffma || !tensor || tensor->trial.time_median_us <= 0 ||
      !(tensor->trial.time_median_us < ffma->trial.time_median_us))
    return std::nullopt;
  if (!launchable(tensor->config, accurate, arch_)) return std::nullopt;
  if (f32x3_problem) *f32x3_problem = accurate;
  return KernelChoice{Selection::exact, tensor->config, tensor->template_hash, f32x3_key};
}

// Among the defaults of this arch (else of any) that can run the problem and launch a block
// per SM at least: the first, in table order, that wastes at most a quarter of its tiles;
// else the one wasting least (skinny problems: the narrow-tile lines). When none launches a
// block per SM, the one launching the most.
const KernelConfig* KernelSelector::choose_default(const Problem& problem) const {
  constexpr double kGoodFill = 0.75;
  constexpr double kClearlyBetterFill = 1.25;  // a later line must beat an earlier by this much
  for (const std::string& arch : {arch_, std::string("*")}) {
    const KernelConfig* fullest = nullptr;
    double fullest_fill = 0;
    const KernelConfig* most = nullptr;
    int64_t most_blocks = -1;
    for (const DefaultKernel& d : defaults_) {
      if (d.arch != arch || d.types != problem.types || !can_run(d.config, problem, arch_))
        continue;
      const int64_t blocks = launched_blocks(d.config, problem);
      if (sm_count_ <= 0 || blocks >= sm_count_) {
        const double fill = tile_fill(d.config, problem);
        if (fill >= kGoodFill) return &d.config;
        if (!fullest || fill > kClearlyBetterFill * fullest_fill) {
          fullest = &d.config;
          fullest_fill = fill;
        }
      } else if (blocks > most_blocks) {
        most_blocks = blocks;
        most = &d.config;
      }
    }
    if (fullest) return fullest;
    if (most) return most;
  }
  return nullptr;
}

}  // namespace tgemm
