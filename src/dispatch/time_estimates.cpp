#include "src/dispatch/time_estimates.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/core/arch_limits.h"
#include "src/core/occupancy.h"
#include "src/model/performance_model.h"
#include "src/templates/template_registry.h"

namespace tgemm {

int operands_alike(Op op_a, Op op_b, const Problem& problem) {
  return int(op_a == problem.op_a) + int(op_b == problem.op_b);
}

TileShape tile_of(const KernelConfig& config, const Problem& problem) {
  return template_named(config.template_name).describe(config, problem).tile;
}

std::string config_id(const KernelConfig& config) {
  return config.template_name + " " + config.params_text();
}

int64_t launched_blocks(const KernelConfig& config, const Problem& problem, int sm_count) {
  const LaunchPlan plan =
      template_named(config.template_name).plan_launch(config, problem, sm_count);
  for (const KernelLaunch& l : plan)
    if (l.entry == 0) return int64_t(l.grid[0]) * l.grid[1] * l.grid[2];
  const TileShape t = tile_of(config, problem);
  return ((problem.m + t.m - 1) / t.m) * ((problem.n + t.n - 1) / t.n) * t.split_k;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

}  // namespace

TimeEstimates::TimeEstimates(std::string arch, int sm_count, std::vector<DeviceCeiling> ceilings,
                             SelectorParameters params)
    : arch_(std::move(arch)),
      sm_count_(sm_count),
      ceilings_(std::move(ceilings)),
      params_(params) {}

// Per config, the median of measured / predicted over the problems where it ran within
// good_there of the fastest on this GPU: how far the model's absolute times are off for it
// here (including what the model cannot tell apart, e.g. a streaming kernel's vector width).
// A config's transposed twin (KernelDescription::transposed) gets the same ratio on the
// transposed layout, where it runs the same loop: a line with records only as its twin would
// otherwise go unscaled.
void TimeEstimates::fit_model_scale(const std::map<std::string, std::vector<Measurement>>& measured,
                                    const std::map<std::string, const Problem*>& problem_of) {
  const auto flip = [](Op op) { return op == Op::N ? Op::T : Op::N; };
  for (const auto& [key, list] : measured) {
    auto problem = problem_of.find(key);
    if (problem == problem_of.end()) continue;
    double fastest = std::numeric_limits<double>::infinity();
    for (const Measurement& m : list) fastest = std::min(fastest, m.time_us);
    for (const Measurement& m : list) {
      if (m.time_us > params_.good_there * fastest) continue;
      const double model = model_us(m.config, *problem->second);
      if (!std::isfinite(model) || model <= 0) continue;
      const Problem& p = *problem->second;
      const KernelDescription d = template_named(m.config.template_name).describe(m.config, p);
      // The twin reads the same stored operands the same way, so it runs the same loop.
      model_scale_[config_id(m.config)].push_back({p.op_a, p.op_b, d.code_path, m.time_us / model});
      if (d.transposed)
        model_scale_[config_id(*d.transposed)].push_back(
            {flip(p.op_b), flip(p.op_a), d.code_path, m.time_us / model});
    }
  }
}

// The median measured / predicted of a config over its records on the loop it runs here whose
// layouts share the most operands with the problem's: a layout change alters the copy loops
// (a pack that pays off only for a transposed B), which records of other layouts hide. Records
// of another loop (KernelDescription::code_path) are no evidence at all.
std::optional<double> TimeEstimates::scale_for(const KernelConfig& config,
                                               const Problem& problem) const {
  auto it = model_scale_.find(config_id(config));
  if (it == model_scale_.end()) return std::nullopt;
  const std::string path = template_named(config.template_name).describe(config, problem).code_path;
  const auto shared = [&](const LayoutRatio& r) { return operands_alike(r.op_a, r.op_b, problem); };
  int most = -1;
  for (const LayoutRatio& r : it->second)
    if (r.path == path) most = std::max(most, shared(r));
  if (most < 0) return std::nullopt;
  std::vector<double> ratios;
  for (const LayoutRatio& r : it->second)
    if (r.path == path && shared(r) == most) ratios.push_back(r.ratio);
  return median(std::move(ratios));
}

double TimeEstimates::model_us(const KernelConfig& config, const Problem& problem) const {
  ModelContext ctx;
  ctx.family = find_template(config.template_name);
  if (!ctx.family) return std::numeric_limits<double>::infinity();
  ctx.limits = arch_limits(arch_);
  ctx.sm_count = sm_count_ > 0 ? sm_count_ : default_sm_count(arch_);
  ctx.roofs = roofs_from(ceilings_, arch_, problem.types);
  ctx.params = params_.model;
  return PerformanceModel(std::move(ctx)).predict_us(config, problem);
}

// Blocks of a streaming config that fit on the GPU at once, from the registers its family
// expects the build to take (KernelDescription::estimated_registers); without one, no limit.
int64_t TimeEstimates::resident_capacity(int registers, const BlockResources& res) const {
  if (registers <= 0) return std::numeric_limits<int64_t>::max();
  const Occupancy occ =
      occupancy(arch_limits(arch_), res.threads, registers, res.dynamic_smem_bytes);
  return std::max<int64_t>(1, int64_t(std::max(1, sm_count_)) * occ.blocks_per_sm);
}

// The time a streaming grid of `blocks` takes per byte against one whose blocks all fit at
// once: a last partial wave of a fraction x of the resident blocks costs sqrt(x) of a wave
// (its blocks start as the first wave's finish, on a lighter-loaded memory system, so less
// than a whole wave, more than its share; docs/selector.md gives the replay behind the root).
double TimeEstimates::stream_tail_factor(int64_t blocks, int64_t resident) {
  if (blocks <= resident) return 1;
  const double waves = double(blocks) / double(resident);
  const double whole = std::floor(waves);
  return (whole + std::sqrt(waves - whole)) / waves;
}

// Tile work a config does on a problem, in whole waves of resident blocks, each block's K
// slice lengthened by the steps it spends outside its loop (ModelParameters::fixed_steps), which
// a split-K kernel carried to a shorter K pays for more of its time.
double TimeEstimates::padded_work(const KernelConfig& config, const Problem& problem) const {
  // A streaming family's work is the bytes it reads; its K slices are grid blocks already
  // (launched_blocks), not loop steps. The bytes stream at the rate its warps in flight reach
  // (a GEMV tuned for a long side keeps few warps per SM on a short one), up to
  // stream_warps_per_sm; the warps counted are those resident at once, and blocks past them
  // form a last partial wave (stream_tail_factor).
  const GemmTemplate* family = find_template(config.template_name);
  const std::optional<KernelDescription> d =
      family ? std::optional(family->describe(config, problem)) : std::nullopt;
  if (d && d->bandwidth_bound) {
    const BlockResources res = family->block_resources(config);
    const int64_t warps = (res.threads + 31) / 32;
    const int64_t blocks = launched_blocks(config, problem, sm_count_);
    const int sms = std::max(1, sm_count_);
    const int64_t resident = std::min(blocks, resident_capacity(d->estimated_registers, res));
    const double per_sm = double(resident * warps) / double(sms);
    const double rate = std::min(1.0, per_sm / params_.stream_warps_per_sm);
    return PerformanceModel::unique_bytes(problem) * stream_tail_factor(blocks, resident) /
           std::max(rate, 1e-3);
  }
  const TileShape t = d ? d->tile : tile_of(config, problem);
  const int64_t resident = std::max<int64_t>(1, sm_count_) * t.blocks_per_sm;
  const BlockGroups groups =
      PerformanceModel::block_groups(t, problem, launched_blocks(config, problem, sm_count_));
  double steps = 0;  // of the busiest block slot: each group's waves of its blocks' K slices
  for (const BlockGroup& g : {groups.whole, groups.tail})
    if (g.blocks > 0)
      steps += double(PerformanceModel::waves(g.blocks, resident)) *
               (double(g.k_tiles) + params_.model.fixed_steps);
  return double(t.m * t.n) * steps * double(t.k);
}

std::vector<double> TimeEstimates::times(const std::vector<Candidate>& candidates,
                                         const Problem& here) const {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> out;
  out.reserve(candidates.size());
  for (const Candidate& c : candidates) {
    double us = kNone;
    switch (c.source) {
      case Candidate::Source::carried:
        us = carried_us(c.config, c.us_there, *c.there, here);
        break;
      case Candidate::Source::model:
        if (const std::optional<double> scale = scale_for(c.config, here))
          us = model_us(c.config, here) * *scale;
        break;
      case Candidate::Source::resplit: {
        const double parent_us = out.at(size_t(c.parent));
        if (std::isfinite(parent_us))
          us = resplit_us(candidates[size_t(c.parent)].config, parent_us, c.config, here);
        break;
      }
    }
    out.push_back(us * c.factor);
  }
  return out;
}

double TimeEstimates::carried_us(const KernelConfig& config, double us_there, const Problem& there,
                                 const Problem& here) const {
  const double model_here = model_us(config, here), model_there = model_us(config, there);
  if (!std::isfinite(model_here) || !std::isfinite(model_there) || model_there <= 0)
    return std::numeric_limits<double>::infinity();
  const double by_model = us_there * model_here / model_there;
  const double by_work = us_there * padded_work(config, here) / padded_work(config, there);
  // Each misjudges what the other sees (the model: vector widths and the family's habits; the
  // work ratio: memory against compute); their geometric mean replays best of the three
  // (docs/selector.md).
  return std::sqrt(by_model * by_work);
}

// Carried like carried_us (the geometric mean of the model's and the padded work's ratio), from
// the config to its sibling on the same problem: both ratios see the waves and each slice's
// length, and the model the partial sums' traffic too.
double TimeEstimates::resplit_us(const KernelConfig& config, double us, const KernelConfig& sibling,
                                 const Problem& here) const {
  const double model = model_us(config, here), model_sibling = model_us(sibling, here);
  if (!std::isfinite(model) || !std::isfinite(model_sibling) || model <= 0)
    return std::numeric_limits<double>::infinity();
  const double work_ratio = padded_work(sibling, here) / padded_work(config, here);
  return us * std::sqrt(model_sibling / model * work_ratio);
}

}  // namespace tgemm
