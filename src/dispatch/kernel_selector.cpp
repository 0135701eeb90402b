#include "src/dispatch/kernel_selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/core/library_log.h"
#include "src/core/vendor_call.h"
#include "src/templates/stored_config.h"
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
    const KernelConfig config = KernelConfig::from_params_text(templ, params);
    if (types != "fp8") {
      out.push_back({arch, parse_gemm_types(types), config});
      continue;
    }
    for (const GemmTypes& t : every_gemm_types())  // one kernel shape for every FP8 pair
      if (t.fp8()) out.push_back({arch, t, config});
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

// The parameter of a tiled family that cuts K into slices, one block each (tile_from_block_params).
const std::string kSplitK = "SPLIT_K";

// How a problem's kernel finds its matrices, as far as its loads go: given (one GEMM or a
// stride apart), from pointer arrays, or from pointer arrays and a grouped launch's table.
int matrix_loads(const Problem& p) {
  const BatchForm form = p.batch_form();
  return form == BatchForm::grouped ? 2 : form == BatchForm::pointers ? 1 : 0;
}

// Squared distance of two shapes in log M, N, K and the batch (a fourth size axis: a batch
// fills the GPU as a larger grid does), plus `alignment_penalty` where their alignments differ
// (their kernels chose vector widths for them) and again for other loads of the matrices
// (pointer arrays against strides), and again for another epilogue (another store: its
// registers and traffic).
double distance(const Problem& a, const Problem& b, double alignment_penalty) {
  const double dm = std::log(double(a.m) / double(b.m));
  const double dn = std::log(double(a.n) / double(b.n));
  const double dk = std::log(double(a.k) / double(b.k));
  const double db = std::log(double(a.batch) / double(b.batch));
  const bool same_alignment =
      a.align_a == b.align_a && a.align_b == b.align_b && a.align_c == b.align_c;
  const bool same_pointers = matrix_loads(a) == matrix_loads(b);
  const bool same_epilogue = a.epilogue == b.epilogue;
  return dm * dm + dn * dn + dk * dk + db * db + (same_alignment ? 0 : alignment_penalty) +
         (same_pointers ? 0 : alignment_penalty) + (same_epilogue ? 0 : alignment_penalty);
}

}  // namespace

// Evidence from a farther shape is less certain: its carried times pay for the distance, so a
// far neighbour's config must beat a near one's by more than the model's error.
double carried_distance_factor(const Problem& there, const Problem& here,
                               const SelectorParameters& params) {
  return 1 + params.far_penalty * std::sqrt(distance(there, here, params.alignment_penalty));
}

bool can_run(const KernelConfig& config, const Problem& problem, const std::string& arch) {
  if (!launchable(config, problem, arch)) return false;
  const TileShape t = tile_of(config, problem);
  const int64_t k_tiles = (problem.k + t.k - 1) / t.k;
  return t.split_k <= std::max<int64_t>(1, k_tiles);
}

KernelSelector::KernelSelector(std::vector<BestEntry> tuned, std::vector<DefaultKernel> defaults,
                               std::string arch, int sm_count,
                               const std::vector<TrialRecord>& measured,
                               std::vector<DeviceCeiling> ceilings, SelectorParameters params)
    : tuned_(std::move(tuned)),
      defaults_(std::move(defaults)),
      arch_(std::move(arch)),
      sm_count_(sm_count),
      params_(params),
      estimates_(arch_, sm_count, std::move(ceilings), params) {
  // Records are input: a config its family's space refuses here is never trusted.
  std::map<std::string, bool> usable;
  const auto refused = [&](const KernelConfig& config) {
    auto [it, fresh] = usable.emplace(config_id(config), true);
    if (fresh) {
      if (auto why = stored_config_rejection(config, arch_)) {
        library_log().warn("tgemm: skipping the tuned entries of {}: {}", config_id(config), *why);
        it->second = false;
      }
    }
    return !it->second;
  };
  std::erase_if(tuned_, [&](const BestEntry& e) { return refused(e.config); });
  for (const TrialRecord& r : measured) {
    if (refused(r.trial.config)) continue;
    tried_families_[r.problem.key()].insert(r.trial.config.template_name);
    // A vendor call's time is evidence for its own problem only (choose_exact): its
    // algorithm is the library's, and no model carries it to another shape.
    if (is_vendor_call(r.trial.config)) continue;
    if (r.trial.status == TrialStatus::resource_exceeded ||
        r.trial.status == TrialStatus::compile_failed)
      failed_builds_.insert(config_id(r.trial.config) + " " + build_variant(r.problem).key());
    if (r.trial.status != TrialStatus::ok || r.trial.time_median_us <= 0) continue;
    measured_[r.problem.key()].push_back({r.trial.config, r.template_hash, r.trial.time_median_us});
    note_split_depth(r.trial.config);
  }
  for (const DefaultKernel& d : defaults_) note_split_depth(d.config);
  // Without recorded trials, each tuned problem's best is its one measurement.
  std::map<std::string, const Problem*> problem_of;
  for (const BestEntry& e : tuned_) {
    auto& list = measured_[e.problem.key()];
    // A vendor best brings our own fastest kernel of its problem, the evidence others carry.
    const bool ours = !is_vendor_call(e.config);
    if (list.empty() && (ours || e.tgemm_best))
      list.push_back(ours ? Measurement{e.config, e.template_hash, e.trial.time_median_us}
                          : Measurement{e.tgemm_best->config, e.tgemm_best_hash,
                                        e.tgemm_best->time_median_us});
    tried_families_[e.problem.key()].insert(e.config.template_name);
    if (ours) note_split_depth(e.config);
    problem_of[e.problem.key()] = &e.problem;
  }
  estimates_.fit_model_scale(measured_, problem_of);
}

// A build that failed (spilled) for the problem's variant says more than records of the same
// config in other variants.
bool KernelSelector::failed_build(const KernelConfig& config, const Problem& problem) const {
  return failed_builds_.count(config_id(config) + " " + build_variant(problem).key()) > 0;
}

void KernelSelector::note_split_depth(const KernelConfig& config) {
  if (config.has(kSplitK)) split_depths_[config.template_name].insert(config.get(kSplitK));
}

std::vector<KernelConfig> KernelSelector::split_siblings(const KernelConfig& config) const {
  std::vector<KernelConfig> out;
  auto depths = split_depths_.find(config.template_name);
  if (depths == split_depths_.end() || !config.has(kSplitK) || config.get(kSplitK) == 1) return out;
  for (int64_t depth : depths->second) {
    if (depth == 1 || depth == config.get(kSplitK)) continue;
    KernelConfig sibling = config;
    sibling.set(kSplitK, depth);
    out.push_back(std::move(sibling));
  }
  return out;
}

std::vector<const BestEntry*> KernelSelector::neighbours(const Problem& problem) const {
  // Among the tuned shapes of the problem's types, those whose layouts share the most operands
  // with it: its own layout where one was tuned, else the nearest layouts, whose configs are
  // then predicted here by their records on those layouts (scale_for). A layout that stores
  // neither operand as any tuned one does (TT where only NN was tuned) takes the defaults: its
  // copy loops share nothing with theirs.
  const auto shared = [&](const Problem& t) { return operands_alike(t.op_a, t.op_b, problem); };
  int most = 0;
  for (const BestEntry& e : tuned_)
    if (e.problem.types == problem.types && e.problem.key() != problem.key())
      most = std::max(most, shared(e.problem));
  if (most == 0) return {};
  const std::string key = problem.key();
  // A batch and a single GEMM are different regimes: configs tuned in one are carried to the
  // other only when no candidate was tuned in the problem's own.
  bool same_regime = false;
  for (const BestEntry& e : tuned_)
    if (e.problem.types == problem.types && shared(e.problem) == most && e.problem.key() != key)
      same_regime = same_regime || e.problem.batched() == problem.batched();
  std::vector<std::pair<double, const BestEntry*>> near;
  for (const BestEntry& e : tuned_) {
    const Problem& t = e.problem;
    if (t.types != problem.types || shared(t) != most || t.key() == key) continue;
    if (same_regime && t.batched() != problem.batched()) continue;
    near.emplace_back(distance(t, problem, params_.alignment_penalty), &e);
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const BestEntry*> out;
  for (size_t i = 0; i < near.size() && i < params_.neighbours; ++i) out.push_back(near[i].second);
  // When no neighbour's tuned best can run the problem (they are of another kind: GEMVs of a
  // smaller side, aligned shapes whose 16-byte loads refuse a misaligned one), what they measured
  // that runs here is only incidental (the shipped defaults every tune times), so the nearest
  // shape whose best runs it joins them.
  const auto runs_here = [&](const BestEntry* e) { return can_run(e->config, problem, arch_); };
  if (std::none_of(out.begin(), out.end(), runs_here))
    for (size_t i = out.size(); i < near.size(); ++i)
      if (runs_here(near[i].second)) {
        out.push_back(near[i].second);
        break;
      }
  return out;
}

// Every config that can run here and ran well on the neighbours (within good_there of the
// fastest there) carries its measured time here (carried_us), so tile waste, wave quantisation,
// split-K and memory- against compute-bound carry over. A config slow there is left out: the model
// misjudges some (the naive kernel), and a neighbour's fast kernels are the evidence. Each also
// offers its split siblings (the other SPLIT_K depths its family ran with here; resplit_us): a
// neighbour tuned for a shorter K split less deeply than this K wants. The defaults
// never measured nearby (e.g. a GEMV line too narrow for the neighbours) are predicted by the model
// alone, scaled by their own scale_for where they ran well elsewhere on this GPU (a family's
// scale alone let unmeasured lines win on paper). The fastest wins; of equal times, the first
// gathered.
KernelSelector::Prediction KernelSelector::choose_untuned(const Problem& problem) const {
  const std::vector<Candidate> candidates = candidates_for(problem);
  const std::vector<double> times = estimates_.times(candidates, problem);
  Prediction best;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (times[i] < best.us) {
      const Candidate& c = candidates[i];
      best = {c.config, c.template_hash, c.there ? c.there->key() : "", times[i]};
    }
  return best;
}

// The configs choose_untuned weighs, in the order it weighs them: each neighbour's, then the
// defaults, each followed by its split siblings.
std::vector<KernelSelector::Candidate> KernelSelector::candidates_for(
    const Problem& problem) const {
  using Source = Candidate::Source;
  std::vector<Candidate> out;
  const std::vector<const BestEntry*> near = neighbours(problem);
  std::set<std::string> seen;  // family and params of every config measured nearby
  for (const BestEntry* e : near)
    if (auto it = measured_.find(e->problem.key()); it != measured_.end())
      for (const Measurement& m : it->second) seen.insert(config_id(m.config));
  for (const BestEntry* e : near) {
    auto it = measured_.find(e->problem.key());
    if (it == measured_.end()) continue;
    const double far = carried_distance_factor(e->problem, problem, params_);
    double fastest_there = std::numeric_limits<double>::infinity();
    for (const Measurement& m : it->second)
      if (can_run(m.config, problem, arch_)) fastest_there = std::min(fastest_there, m.time_us);
    for (const Measurement& m : it->second) {
      if (!can_run(m.config, problem, arch_) || m.time_us > params_.good_there * fastest_there ||
          failed_build(m.config, problem))
        continue;
      out.push_back({Source::carried, m.config, m.template_hash, &e->problem, m.time_us, far});
      add_split_siblings(problem, seen, out);
    }
  }
  for (const DefaultKernel& d : defaults_) {
    if ((d.arch != arch_ && d.arch != "*") || d.types != problem.types) continue;
    if (seen.count(config_id(d.config)) || !can_run(d.config, problem, arch_) ||
        failed_build(d.config, problem))
      continue;
    Candidate c;
    c.config = d.config;  // Source::model
    out.push_back(std::move(c));
    add_split_siblings(problem, seen, out);
  }
  return out;
}

// A sibling measured nearby was weighed on its own record there (or left out as slow there).
// A sibling that goes against the change in K (shallower for a longer K, deeper for a shorter
// one) is never offered: the model's guess alone cannot outweigh the neighbour's measurement.
void KernelSelector::add_split_siblings(const Problem& problem, const std::set<std::string>& seen,
                                        std::vector<Candidate>& out) const {
  const int parent = int(out.size()) - 1;
  const KernelConfig config = out.back().config;
  const Problem* there = out.back().there;
  for (KernelConfig& sibling : split_siblings(config)) {
    if (seen.count(config_id(sibling)) || !can_run(sibling, problem, arch_) ||
        failed_build(sibling, problem))
      continue;
    const bool deeper = sibling.get(kSplitK) > config.get(kSplitK);
    if (there && ((problem.k > there->k && !deeper) || (problem.k < there->k && deeper))) continue;
    Candidate c;
    c.source = Candidate::Source::resplit;
    c.config = std::move(sibling);
    c.there = there;
    c.factor = params_.unmeasured_margin;
    c.parent = parent;
    out.push_back(std::move(c));
  }
}

KernelChoice KernelSelector::choice_of(const Prediction& p) const {
  if (p.from.empty())
    return {Selection::fallback_default, *p.config, p.template_hash, "",
            fmt::format("the fastest predicted here ({:.1f} us) of the defaults and of what the "
                        "nearest tuned shapes measured",
                        p.us)};
  return {Selection::nearest, *p.config, p.template_hash, p.from,
          fmt::format("the fastest predicted here ({:.1f} us) of what the nearest tuned shapes "
                      "measured and the defaults",
                      p.us)};
}

// The tuned best was measured correct and fastest on this very problem, among the families it
// tried. One it never tried is only a prediction here, but the same prediction serves every
// untuned shape: it takes the problem when predicted faster than the measured best.
KernelChoice KernelSelector::choose_exact(const BestEntry& e, const Problem& problem) const {
  const std::string key = problem.key();
  const double measured_us = e.trial.time_median_us;
  // A vendor call won the race on this problem against every kernel of ours it measured.
  const std::string tuned = is_vendor_call(e.config)
                                ? fmt::format("{}, fastest tuned on this problem ({:.1f} us)",
                                              describe_vendor_call(e.config), measured_us)
                                : fmt::format("tuned on this problem ({:.1f} us)", measured_us);
  const Prediction p = choose_untuned(problem);
  const auto tried = tried_families_.find(key);
  if (!p.config || (tried != tried_families_.end() && tried->second.count(p.config->template_name)))
    return {Selection::exact, e.config, e.template_hash, key,
            fmt::format("{}, which tried every family its tuned neighbours and the defaults offer",
                        tuned)};
  const std::string& family = p.config->template_name;
  if (measured_us < p.us)
    return {Selection::exact, e.config, e.template_hash, key,
            fmt::format("{}, faster than {} (never tried here) is predicted ({:.1f} us)", tuned,
                        family, p.us)};
  KernelChoice c = choice_of(p);
  c.rule = fmt::format(
      "this problem's tuned best ({:.1f} us{}) never tried {}, whose {} is predicted faster here "
      "({:.1f} us{})",
      measured_us, is_vendor_call(e.config) ? ", " + describe_vendor_call(e.config) : "", family,
      c.config.canonical_name(), p.us, p.from.empty() ? "" : ", from the tuned shape " + p.from);
  return c;
}

KernelChoice KernelSelector::choose(const Problem& problem) const {
  const std::string key = problem.key();
  // Only the launch rules can refuse a tuned best (can_run's "sensible" split-K check is for
  // kernels never run here).
  for (const BestEntry& e : tuned_)
    if (e.problem.key() == key &&
        (is_vendor_call(e.config) || launchable(e.config, problem, arch_)))
      return choose_exact(e, problem);
  const Prediction p = choose_untuned(problem);
  if (p.config) return choice_of(p);
  if (const KernelConfig* d = choose_default(problem))
    return {Selection::fallback_default, *d, "", "",
            "a shipped default sized for the problem (nothing measured predicts one here)"};
  return {Selection::cublas, {}, "", "", "no tuned or default kernel can run it"};
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
  return KernelChoice{Selection::exact, tensor->config, tensor->template_hash, f32x3_key,
                      "the opted-in 3xTF32 math: the tuned f32x3 kernel measured faster than the "
                      "tuned f32 one"};
}

namespace {

// Share of a config's padded output tiles that the problem's M x N fills (1: no waste).
double tile_fill(const KernelConfig& config, const Problem& problem) {
  const TileShape t = tile_of(config, problem);
  const int64_t bm = t.m, bn = t.n;
  const int64_t padded_m = (problem.m + bm - 1) / bm * bm;  // whole tiles
  const int64_t padded_n = (problem.n + bn - 1) / bn * bn;
  return double(problem.m) / double(padded_m) * double(problem.n) / double(padded_n);
}

}  // namespace

// Among the defaults of this arch (else of any) that can run the problem and launch a block
// per SM at least (full_wave of them): the first, in table order, that fills good_fill of its
// tiles; else the one wasting least (skinny problems: the narrow-tile lines). When no line of
// either launches a block per SM, the one launching the most (so an arch's big-tile lines do not
// take small problems from the any-arch small-tile ones).
const KernelConfig* KernelSelector::choose_default(const Problem& problem) const {
  const KernelConfig* most = nullptr;
  int64_t most_blocks = -1;
  for (const std::string& arch : {arch_, std::string("*")}) {
    const KernelConfig* fullest = nullptr;
    double fullest_fill = 0;
    for (const DefaultKernel& d : defaults_) {
      if (d.arch != arch || d.types != problem.types || !can_run(d.config, problem, arch_) ||
          failed_build(d.config, problem))
        continue;
      const int64_t blocks = launched_blocks(d.config, problem, sm_count_);
      if (sm_count_ <= 0 || blocks >= params_.full_wave * double(sm_count_)) {
        const double fill = tile_fill(d.config, problem);
        if (fill >= params_.good_fill) return &d.config;
        if (!fullest || fill > params_.clearly_better_fill * fullest_fill) {
          fullest = &d.config;
          fullest_fill = fill;
        }
      } else if (blocks > most_blocks) {
        most_blocks = blocks;
        most = &d.config;
      }
    }
    if (fullest) return fullest;
  }
  return most;
}

}  // namespace tgemm
