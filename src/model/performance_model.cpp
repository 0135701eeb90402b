#include "src/model/performance_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/core/occupancy.h"

namespace tgemm {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The time factor of a config's copy width (1 for 16-byte copies; 4-byte ones pay three
// halvings' costs).
double narrow_copy_factor(int copy_bytes, double cost) {
  return 1.0 + cost * (16.0 / double(std::clamp(copy_bytes, 1, 16)) - 1.0);
}

struct ArchRoofs {
  const char* arch;
  double ffma_tflops, copy_tbps;
  int sms;
};
constexpr ArchRoofs kArchRoofs[] = {{"sm_75", 8.1, 0.28, 40},
                                    {"sm_80", 19.5, 1.5, 108},
                                    {"sm_86", 35.0, 0.8, 84},
                                    {"sm_89", 30.0, 0.27, 58},
                                    {"sm_90", 66.9, 4.26, 132}};

const ArchRoofs& roofs_of(const std::string& arch) {
  for (const ArchRoofs& r : kArchRoofs)
    if (arch == r.arch) return r;
  return kArchRoofs[4];  // newer than the table: the sm_90 figures
}

// The compute roof's multiple of FFMA for the tensor types, and the ceiling kind measuring it.
double tensor_factor(const GemmTypes& types, const char** kind) {
  *kind = kFfmaCeiling;
  if (types.compute == ComputeType::tf32) return *kind = "tf32", 8.0;
  if (types.compute == ComputeType::f32x3) return *kind = "tf32", 8.0 / 3.0;
  if (types.a == DType::f16) return *kind = "f16", 16.0;
  if (types.a == DType::bf16) return *kind = "bf16", 16.0;
  if (types.fp8()) return *kind = "fp8", 32.0;  // twice the 16-bit rate (Hopper's FP8 wgmma)
  return 1.0;
}

}  // namespace

Roofs default_roofs(const std::string& arch, const GemmTypes& types) {
  const char* kind;
  const ArchRoofs& r = roofs_of(arch);
  return {r.ffma_tflops * 1e12 * tensor_factor(types, &kind), r.copy_tbps * 1e12};
}

Roofs roofs_from(const std::vector<DeviceCeiling>& ceilings, const std::string& arch,
                 const GemmTypes& types) {
  Roofs roofs = default_roofs(arch, types);
  const char* kind;
  tensor_factor(types, &kind);
  const double passes = types.compute == ComputeType::f32x3 ? 3 : 1;  // 3xTF32: three MMAs
  for (const DeviceCeiling& c : ceilings) {
    if (c.value <= 0) continue;
    if (c.kind == kCopyBandwidthCeiling) roofs.bytes_per_s = c.value;
    if (c.kind == kind) roofs.flops_per_s = c.value / passes;
  }
  return roofs;
}

int default_sm_count(const std::string& arch) { return roofs_of(arch).sms; }

int64_t PerformanceModel::waves(int64_t blocks, int64_t resident) {
  return (blocks + resident - 1) / std::max<int64_t>(1, resident);
}

BlockGroups PerformanceModel::block_groups(const TileShape& t, const Problem& p, int64_t blocks) {
  const int64_t k_tiles = (p.k + t.k - 1) / t.k;
  BlockGroups g;
  if (t.tail_split <= 1) {
    g.whole = {blocks, (k_tiles + t.split_k - 1) / t.split_k};
    return g;
  }
  // The plan's grid: every tile once, the tail's tiles once more per extra slice.
  const int64_t tiles = ((p.m + t.m - 1) / t.m) * ((p.n + t.n - 1) / t.n);
  const int64_t tail = std::max<int64_t>(0, blocks - tiles) / (t.tail_split - 1);
  g.whole = {tiles - tail, k_tiles};
  if (tail > 0) g.tail = {tail * t.tail_split, (k_tiles + t.tail_split - 1) / t.tail_split};
  return g;
}

namespace {

// `size` rounded up to whole tiles of `tile`.
double whole_tiles(int64_t size, int64_t tile) { return double((size + tile - 1) / tile * tile); }

}  // namespace

double PerformanceModel::useful_fraction(const TileShape& t, const Problem& p) {
  const int64_t k_unit = t.k * t.split_k;  // every slice runs whole K steps
  return double(p.m) / whole_tiles(p.m, t.m) * double(p.n) / whole_tiles(p.n, t.n) * double(p.k) /
         whole_tiles(p.k, k_unit);
}

int PerformanceModel::estimated_registers(const TileShape& t, int threads) {
  const double accumulators = double(t.m * t.n) / std::max(1, threads);
  const double fragments = 2 * std::sqrt(accumulators);
  const double staging = double((t.m + t.n) * t.k) / std::max(1, threads);
  return int(std::ceil(accumulators + fragments + staging)) + 24;
}

double PerformanceModel::occupancy_efficiency(int warps_per_sm) const {
  return std::min(1.0,
                  std::sqrt(double(std::max(0, warps_per_sm)) / ctx_.params.warps_to_hide_latency));
}

double PerformanceModel::predict_us(const KernelConfig& config, const Problem& p) const {
  const GemmTemplate& family = *ctx_.family;
  if (family.unsupported_reason(config, p, ctx_.limits.arch)) return kInf;
  const KernelDescription d = family.describe(config, p);
  const TileShape& t = d.tile;
  const int64_t k_tiles = (p.k + t.k - 1) / t.k;
  if (t.split_k > std::max<int64_t>(1, k_tiles)) return kInf;
  const BlockResources res = family.block_resources(config);
  const LaunchPlan plan = family.plan_launch(config, p, ctx_.sm_count);
  int64_t blocks = 0;
  for (const KernelLaunch& l : plan)
    if (l.entry == 0) blocks = int64_t(l.grid[0]) * l.grid[1] * l.grid[2];

  // Registers: the estimate, capped where MIN_BLOCKS makes the compiler fit more blocks.
  const ArchLimits& lim = ctx_.limits;
  const int wanted = estimated_registers(t, res.threads);
  const int cap = std::min<int>(
      lim.max_regs_per_thread,
      int(lim.regs_per_sm / std::max<int64_t>(1, res.threads * t.blocks_per_sm)) / 8 * 8);
  const Occupancy occ = occupancy(lim, res.threads, std::min(wanted, cap), res.dynamic_smem_bytes);
  if (occ.blocks_per_sm == 0 || blocks == 0) return kInf;

  // A streaming family reads its operands once at the copy rate; its tile is no register tile.
  // Its blocks each cover t.k of K, so K / t.k partial sums meet in C.
  const double narrow = narrow_copy_factor(d.copy_bytes, ctx_.params.narrow_copy_cost);
  const double serial_us = ctx_.params.serial_read_us * double(d.serial_partial_reads);
  if (d.bandwidth_bound)
    return narrow * streamed_us(p, std::max<int64_t>(t.split_k, k_tiles), plan.count) +
           padded_compute_us(t, p) + serial_us;

  // Compute: each wave puts q blocks on an SM; they share its FFMA rate at the efficiency of
  // the register tile (FFMAs per shared-memory load) and of the warps resident.
  const int sms = std::max(1, ctx_.sm_count);
  const int64_t resident = int64_t(sms) * occ.blocks_per_sm;
  const int warps = (res.threads + 31) / 32;
  const double per_thread = std::sqrt(double(t.m * t.n) / std::max(1, res.threads)) / 2;
  const double tile_efficiency = per_thread / (per_thread + 1.5);
  const double sm_rate = ctx_.roofs.flops_per_s / sms * tile_efficiency;
  // A group's whole waves, then its last wave with fewer blocks per SM.
  const auto group_s = [&](const BlockGroup& g) {
    const double block_flops =
        2.0 * double(t.m * t.n) * (double(g.k_tiles) + ctx_.params.fixed_steps) * double(t.k);
    const auto wave_s = [&](int64_t per_sm) {
      return double(per_sm) * block_flops / (sm_rate * occupancy_efficiency(int(per_sm) * warps));
    };
    const int64_t full = g.blocks / resident, rest = g.blocks % resident;
    return double(full) * wave_s(occ.blocks_per_sm) + (rest ? wave_s((rest + sms - 1) / sms) : 0);
  };
  const BlockGroups groups = block_groups(t, p, blocks);
  const double compute_s = group_s(groups.whole) + group_s(groups.tail);

  // Memory: the operands once from device memory and the tiles' loads from L2. The split-K
  // partials (atomics or workspace) come after: each block adds its tile once its loop ends,
  // so they overlap neither.
  const double a_bytes = element_bytes(p.types.a);
  const double block_k = double(groups.whole.blocks * groups.whole.k_tiles +
                                groups.tail.blocks * groups.tail.k_tiles) *
                         double(t.k);
  const double tiles = double(t.m + t.n) * block_k * a_bytes;
  const double bw = ctx_.roofs.bytes_per_s;
  const double memory_s = std::max(unique_bytes(p) / bw, tiles / (ctx_.params.l2_over_dram * bw));
  // A stream tail's slices each write a partial tile and its last slice reads them back: the
  // split-K partials' round trip, priced alike.
  const double tail_bytes = ctx_.params.partial_cost * double(groups.tail.blocks * t.m * t.n) * 4;
  const double partial_s = (partial_bytes(p, t.split_k) + tail_bytes) / bw;

  double us = (std::max(compute_s, memory_s) + partial_s) * narrow * 1e6 + serial_us +
              ctx_.params.launch_us * double(plan.count);
  if (wanted > cap) us *= ctx_.params.spill_factor;
  return us;
}

double PerformanceModel::unique_bytes(const Problem& p) {
  const double a_bytes = element_bytes(p.types.a), c_bytes = element_bytes(p.types.c);
  return (double(p.m) * p.k + double(p.k) * p.n) * a_bytes + 2 * double(p.m) * p.n * c_bytes;
}

// A streaming kernel's FFMAs (or a tensor-core family's mma, at its types' roof) take issue slots
// beside its loads and add to the stream's time rather than hide under it: every streamed
// element meets each row of the config's small side, ROWS of them whatever the problem's (the
// rows past it multiply zeros), so a config with more rows than the problem is slower.
double PerformanceModel::padded_compute_us(const TileShape& t, const Problem& p) const {
  return 2.0 * whole_tiles(p.m, t.m) * whole_tiles(p.n, t.n) * double(p.k) /
         ctx_.roofs.flops_per_s * 1e6;
}

double PerformanceModel::partial_bytes(const Problem& p, int64_t split_k) const {
  return split_k > 1 ? ctx_.params.partial_cost * double(p.m) * double(p.n) * 4 * double(split_k)
                     : 0;
}

double PerformanceModel::streamed_us(const Problem& p, int64_t split_k, size_t launches) const {
  const double bw = ctx_.roofs.bytes_per_s;
  return (unique_bytes(p) + partial_bytes(p, split_k)) / bw * 1e6 +
         ctx_.params.launch_us * double(launches);
}

std::vector<double> PerformanceModel::predict_all(const KernelConfig& config) const {
  std::vector<double> out;
  out.reserve(ctx_.problems.size());
  for (const Problem& p : ctx_.problems) out.push_back(predict_us(config, p));
  return out;
}

}  // namespace tgemm
