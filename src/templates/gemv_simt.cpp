// Host side of gemv_simt (kernel_templates/gemv_simt.cuh, configs/spaces/gemv_simt.yaml):
// FP32 GEMM with one side of at most ROWS (GEMV-like shapes), the large operand streamed once;
// K slices meet in C through atomics (SPLIT_MODE=0; each strip's first slice scales C by beta in
// the same launch), the deterministic workspace reduction in a second launch (1) or by each
// strip's last block to arrive (2, one launch), or the shared memory of a thread block cluster
// that holds all of a strip's slices (3, sm_90).
#include <fmt/format.h>

#include <algorithm>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"
#include "src/templates/gemv_sides.h"

namespace tgemm {

namespace {

class GemvSimt final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  const FamilyTypes& computed_types() const override { return ffma_f32(); }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const override {
    const bool small_m = config.get("SIDE") == 0;
    const int64_t rows = config.get("ROWS");
    const int64_t small = small_m ? problem.m : problem.n;
    if (small > rows)
      return fmt::format(
          "{} SIDE={} computes {} <= ROWS={} (have {} = {}): larger problems belong to the GEMM "
          "families",
          name(), config.get("SIDE"), small_m ? "M" : "N", rows, small_m ? "M" : "N", small);
    // The large operand is the one read with VEC-wide loads.
    const int64_t vec_bytes = config.get("VEC") * int64_t(sizeof(float));
    const int align = small_m ? problem.align_b : problem.align_a;
    if (align % vec_bytes != 0)
      return fmt::format("VEC={} needs {} (the large operand) aligned to {} bytes (have {})",
                         config.get("VEC"), small_m ? "B" : "A", vec_bytes, align);
    if (auto why = loop_unsupported(config, problem)) return why;
    const int64_t slices = slices_of(config, problem);
    if (slices > kMaxGridY)
      return fmt::format("K = {} needs {} slices of KB={}; a grid holds at most {}", problem.k,
                         slices, config.get("KB"), kMaxGridY);
    if (strips_of(config, problem) > kMaxGridX)
      return fmt::format("{} = {} needs more than {} blocks", small_m ? "N" : "M",
                         small_m ? problem.n : problem.m, kMaxGridX);
    const int64_t mode = config.get("SPLIT_MODE");
    if ((mode == 0 || mode == 2) && slices > 1 && strips_of(config, problem) > kMaxArrivalStrips)
      return fmt::format(
          "SPLIT_MODE={} counts arrivals for at most {} strips; {} = {} needs {} (use "
          "SPLIT_MODE=1)",
          mode, kMaxArrivalStrips, small_m ? "N" : "M", small_m ? problem.n : problem.m,
          strips_of(config, problem));
    if (auto why = cluster_unsupported(config, problem, arch, slices)) return why;
    if ((mode == 1 || mode == 2) && slices > 1)
      return split_k_workspace_unsupported(problem, slices);
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig& config, const GemmTypes&) const override {
    if (config.get("SPLIT_MODE") == 1) return {name(), name() + "_reduce"};
    return {name()};
  }

  // One K slice per grid row; SPLIT_MODE=1 needs a reduction after, SPLIT_MODE=2 only the
  // workspace (its main launch reduces), atomic slices (0) and SPLIT_MODE=3 nothing more (a
  // cluster is CLUSTER rows, the slices past K empty).
  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem, int) const override {
    const int64_t mode = config.get("SPLIT_MODE");
    const int64_t slices = mode == 3 ? config.get("CLUSTER") : slices_of(config, problem);
    LaunchPlan plan;
    KernelLaunch main;
    main.grid[0] = unsigned(strips_of(config, problem));
    main.grid[1] = unsigned(slices);
    const BlockResources r = block_resources(config);
    main.block[0] = unsigned(r.threads);
    main.smem_bytes = smem_bytes(config, &problem);  // what this layout's build stages
    plan.add(main);
    // The reduction waits for the main grid in the kernel (gemv_simt_reduce): launched early,
    // its blocks are resident when the main grid ends.
    if (slices > 1 && mode == 1) add_split_k_reduce(&plan, problem, slices, 1, true);
    if (slices > 1 && mode == 2) plan.workspace_bytes = split_k_workspace_bytes(problem, slices);
    plan.module_state = slices > 1 && (mode == 0 || mode == 2);  // the kernel's per-strip counters
    return plan;
  }

  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads = int(32 * config.get("WARPS"));
    r.dynamic_smem_bytes = smem_bytes(config);  // the most of any layout
    return r;
  }

  // A GEMV: it streams its large operand once, at memory bandwidth.
  KernelDescription describe(const KernelConfig& config, const Problem& problem) const override {
    KernelDescription d = gemv::streamed_description(tile(config), config, problem,
                                                     estimated_registers(config, problem));
    d.copy_bytes = copy_bytes(config);
    d.serial_partial_reads = serial_partial_reads(config, problem);
    return d;
  }

  int copy_bytes(const KernelConfig& config) const { return int(4 * config.get("VEC")); }

  // SPLIT_MODE=2: the strip's last block sums each of its outputs over every slice
  // (finish_strip), its threads taking the strip's S x TILE_L outputs in turn.
  int64_t serial_partial_reads(const KernelConfig& config, const Problem& problem) const {
    const int64_t slices = slices_of(config, problem);
    if (config.get("SPLIT_MODE") != 2 || slices <= 1) return 0;
    const bool small_m = config.get("SIDE") == 0;
    const int64_t small = small_m ? problem.m : problem.n, large = small_m ? problem.n : problem.m;
    const int64_t outputs = small * std::min(tile_l_of(config, problem), large);
    const int64_t threads = 32 * config.get("WARPS");
    return slices * ((outputs + threads - 1) / threads);
  }

  // The sums each thread holds and the X vectors it loads ahead, plus addressing: within a few
  // registers of ptxas on sm_90 for the 16-row configs (124-128 along L and along K).
  int estimated_registers(const KernelConfig& config, const Problem& problem) const {
    const int64_t lw = config.get("LW"), rows = config.get("ROWS"), vec = config.get("VEC");
    if (gemv::x_k_contig(config, problem))
      return int(std::min<int64_t>(255, lw * rows + 2 * lw * vec + 30));
    const int64_t buffers =
        config.get_or("STAGES", 0) > 0 || config.get_or("PREFETCH", 1) == 0 ? 1 : 2;
    return int(std::min<int64_t>(255, lw * rows * vec + buffers * 4 * lw * vec + 30));
  }

  // For the selector: ROWS along the small side, the strip along the large (as when X is
  // contiguous along it), KB deep.
  TileShape tile(const KernelConfig& config) const {
    const int64_t strip = 32 * config.get("VEC") * config.get("LW");
    const bool small_m = config.get("SIDE") == 0;
    return {small_m ? config.get("ROWS") : strip, small_m ? strip : config.get("ROWS"),
            config.get("KB"), 1, 1};
  }

 private:
  static constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
  static constexpr int64_t kMaxGridY = 65535;
  // The kernel's GEMV_MAX_STRIPS: SPLIT_MODE 0 and 2's arrival counters, one per strip.
  static constexpr int64_t kMaxArrivalStrips = 65536;

  // The parameters that shape only one of the two loops (X contiguous along K or along L):
  // a value the problem's loop ignores would build and measure the same kernel twice.
  static std::optional<std::string> loop_unsupported(const KernelConfig& config,
                                                     const Problem& problem) {
    const bool small_m = config.get("SIDE") == 0;
    const bool along_k = gemv::x_k_contig(config, problem);
    const char* large = small_m ? "B" : "A";
    const int64_t prefetch = config.get_or("PREFETCH", 1);  // configs stored before it: 1
    if (prefetch != 0 && prefetch != 1) return fmt::format("PREFETCH={} is not 0 or 1", prefetch);
    if (prefetch == 0 && along_k)
      return fmt::format(
          "PREFETCH=0 builds the same kernel as PREFETCH=1 when {} is stored "
          "contiguous along K (only the loop along L prefetches)",
          large);
    const int64_t stages = config.get_or("STAGES", 0);  // configs stored before it: 0
    if (stages != 0 && (stages < 2 || stages > 4))
      return fmt::format("STAGES={} is not 0 or 2..4", stages);
    if (stages != 0 && along_k)
      return fmt::format(
          "STAGES={} builds the same kernel as STAGES=0 when {} is stored contiguous along K "
          "(only the loop along L has a cp.async ring)",
          stages, large);
    if (stages != 0 && prefetch == 0)
      return fmt::format(
          "PREFETCH=0 builds the same kernel as PREFETCH=1 when STAGES={} (the "
          "ring replaces the register prefetch)",
          stages);
    const int64_t klanes = config.get_or("KLANES", 32);  // configs stored before it: 32
    if (klanes != 4 && klanes != 8 && klanes != 16 && klanes != 32)
      return fmt::format("KLANES={} is not 4, 8, 16 or 32", klanes);
    if (klanes != 32 && !along_k)
      return fmt::format(
          "KLANES={} builds the same kernel as KLANES=32 when {} is stored contiguous along {} "
          "(only the loop along K groups lanes by row)",
          klanes, large, small_m ? "N" : "M");
    // Along L each lane holds LW*ROWS vectors of VEC sums; along K, LW*ROWS sums.
    const int64_t sums = config.get("LW") * config.get("ROWS") * config.get("VEC");
    if (!along_k && sums > 64)
      return fmt::format(
          "LW*ROWS*VEC = {} accumulators per thread (more than 64) when {} is stored contiguous "
          "along {}",
          sums, large, small_m ? "N" : "M");
    return std::nullopt;
  }

  // SPLIT_MODE=3 and CLUSTER come together, on sm_90+, for K that one cluster's slices cover.
  static std::optional<std::string> cluster_unsupported(const KernelConfig& config,
                                                        const Problem& problem,
                                                        const std::string& arch, int64_t slices) {
    const int64_t mode = config.get("SPLIT_MODE"), cluster = config.get_or("CLUSTER", 1);
    if (mode != 3 && cluster > 1)
      return fmt::format("CLUSTER={} needs SPLIT_MODE=3 (have SPLIT_MODE={})", cluster, mode);
    if (mode != 3) return std::nullopt;
    if (cluster != 2 && cluster != 4 && cluster != 8)
      return fmt::format("SPLIT_MODE=3 needs CLUSTER of 2, 4 or 8 blocks (have {})", cluster);
    if (arch_number(arch) < 90)
      return fmt::format("SPLIT_MODE=3 needs thread block clusters (sm_90+), not {}", arch);
    if (slices > cluster)
      return fmt::format(
          "SPLIT_MODE=3 meets at most CLUSTER={} K slices in one cluster; K = {} needs {} of "
          "KB={}",
          cluster, problem.k, slices, config.get("KB"));
    return std::nullopt;
  }

  // The kernel's W_SO_PITCH: floats per row of W staged in its stored order.
  static constexpr int64_t kStoredOrderPitch = 20;

  // The kernel's W_FLOATS, the staged W slice: ROWS rows of KB floats, or KB rows of
  // kStoredOrderPitch where W is stored along S on the loop along K with 13-16 rows (the
  // kernel's W_STORED_ORDER). Without a problem, the most of any layout.
  static int64_t w_floats(const KernelConfig& config, const Problem* problem) {
    const int64_t rows = config.get("ROWS"), kb = config.get("KB");
    if (rows <= 12) return rows * kb;
    if (!problem) return kStoredOrderPitch * kb;
    const bool w_along_s =
        config.get("SIDE") == 0 ? problem->op_a == Op::T : problem->op_b == Op::N;
    return gemv::x_k_contig(config, *problem) && w_along_s ? kStoredOrderPitch * kb : rows * kb;
  }

  // Dynamic shared memory: the staged W slice, then (STAGES > 0) each warp's ring of K groups
  // of X. Without a problem, the most of any layout (block_resources sizes a block by the
  // config alone).
  static size_t smem_bytes(const KernelConfig& config, const Problem* problem = nullptr) {
    const int64_t ring = config.get_or("STAGES", 0) * config.get("WARPS") * 4 * config.get("LW") *
                         32 * config.get("VEC");
    return size_t(w_floats(config, problem) + ring) * sizeof(float);
  }

  // The kernel's slices_of: K in KB-deep slices, one for K <= KB (K = 0 included).
  static int64_t slices_of(const KernelConfig& config, const Problem& problem) {
    const int64_t kb = config.get("KB");
    return problem.k > kb ? (problem.k + kb - 1) / kb : 1;
  }

  // The kernel's TILE_L, the strip of the large side one block covers: it depends on which way
  // X is stored.
  static int64_t tile_l_of(const KernelConfig& config, const Problem& problem) {
    const int64_t klanes = config.has("KLANES") ? config.divisor("KLANES") : 32;
    const int64_t rows_per_warp = config.get("LW") * (32 / klanes);
    return gemv::x_k_contig(config, problem) ? config.get("WARPS") * rows_per_warp
                                             : 32 * config.get("VEC") * config.get("LW");
  }

  // Blocks along the large side.
  static int64_t strips_of(const KernelConfig& config, const Problem& problem) {
    const int64_t l = config.get("SIDE") == 0 ? problem.n : problem.m;
    const int64_t tile_l = tile_l_of(config, problem);
    return std::max<int64_t>(1, (l + tile_l - 1) / tile_l);
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_gemv_simt_template(KernelSource source) {
  return std::make_unique<GemvSimt>(std::move(source));
}

}  // namespace tgemm
