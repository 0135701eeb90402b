// Host side of gemv_mma (kernel_templates/gemv_mma.cuh, configs/spaces/gemv_mma.yaml): GEMM
// with one side of C at most 16 on tensor cores (tf32 or f32x3), the large operand streamed once
// into mma fragments, along its stored direction; K slices add into C through f32 atomics after
// C = beta * C.
#include <fmt/format.h>

#include <algorithm>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"
#include "src/templates/gemv_sides.h"

namespace tgemm {

namespace {

class GemvMma final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  const FamilyTypes& computed_types() const override {
    static const FamilyTypes types{
        {{"tf32", 80}, {"f32x3", 80}},
        "f32 on tf32 tensor cores (sm_80 on); FFMA-accurate f32 is a CUDA-core family's"};
    return types;
  }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string&) const override {
    const bool small_m = config.get("SIDE") == 0;
    const int64_t small = small_m ? problem.m : problem.n;
    if (small > kRows)
      return fmt::format(
          "{} SIDE={} computes {} <= {} (have {} = {}): larger problems belong to the GEMM "
          "families",
          name(), config.get("SIDE"), small_m ? "M" : "N", kRows, small_m ? "M" : "N", small);
    // The large operand is the one read with 16-byte loads.
    const int align = small_m ? problem.align_b : problem.align_a;
    if (align % 16 != 0)
      return fmt::format(
          "{} reads {} (the large operand) with 16-byte loads: it must be aligned "
          "to 16 bytes (have {})",
          name(), small_m ? "B" : "A", align);
    if (slices_of(config, problem) > kMaxGridY)
      return fmt::format("K = {} needs {} slices of KB={}; a grid holds at most {}", problem.k,
                         slices_of(config, problem), config.get("KB"), kMaxGridY);
    if (strips_of(config, problem) > kMaxGridX)
      return fmt::format("{} = {} needs more than {} blocks", small_m ? "N" : "M",
                         small_m ? problem.n : problem.m, kMaxGridX);
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig&, const GemmTypes&) const override {
    return {name(), name() + "_prepare_c"};
  }

  // One K slice per grid row; slices add into C, so C = beta * C runs first.
  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem, int) const override {
    LaunchPlan plan;
    const int64_t slices = slices_of(config, problem);
    if (slices > 1) plan.add(scale_c_launch(problem, 1));
    KernelLaunch main;
    main.grid[0] = unsigned(strips_of(config, problem));
    main.grid[1] = unsigned(slices);
    const BlockResources r = block_resources(config);
    main.block[0] = unsigned(r.threads);
    main.smem_bytes = r.dynamic_smem_bytes;
    plan.add(main);
    return plan;
  }

  // W's slice as fragments: a 16-byte word per lane and k8-step, twice for f32x3's small parts
  // (sized for f32x3, the larger).
  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads = int(32 * config.get("WARPS"));
    r.dynamic_smem_bytes = size_t(2 * (config.get("KB") / 8) * 32 * 16);
    return r;
  }

  KernelDescription describe(const KernelConfig& config, const Problem& problem) const override {
    return gemv::streamed_description(tile(config), config, problem,
                                      estimated_registers(config, problem));
  }

  // The sums and the large operand's next step in registers, plus addressing: per group of 32
  // along L, 16 sums and 16 loaded values; per n tile of 8 along K, 4 sums and 16 loaded values
  // and the unrolled chunk's splits (ptxas, sm_90, f32x3, LW = 1, 2, 4: along L 62, 94, 166;
  // along K 48, 80, 168).
  int estimated_registers(const KernelConfig& config, const Problem& problem) const {
    const int64_t base = gemv::x_k_contig(config, problem) ? 16 : 30;
    return int(std::min<int64_t>(255, 32 * config.get("LW") + base));
  }

  // For the selector: the mma's 16 rows along the small side, a block's strip along the large
  // (as when the large operand is stored along it), KB deep.
  TileShape tile(const KernelConfig& config) const {
    const int64_t strip = 32 * config.get("WARPS") * config.get("LW");
    const bool small_m = config.get("SIDE") == 0;
    return {small_m ? kRows : strip, small_m ? strip : kRows, config.get("KB"), 1, 1};
  }

 private:
  static constexpr int64_t kRows = 16;  // the mma's M: the most of the small side
  static constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
  static constexpr int64_t kMaxGridY = 65535;

  // The kernel's TILE_L: large-side values per block, 32 per group along L, 8 per n tile along K.
  static int64_t tile_l_of(const KernelConfig& config, const Problem& problem) {
    const int64_t per_group = gemv::x_k_contig(config, problem) ? 8 : 32;
    return config.get("WARPS") * per_group * config.get("LW");
  }
  static int64_t strips_of(const KernelConfig& config, const Problem& problem) {
    const int64_t l = config.get("SIDE") == 0 ? problem.n : problem.m;
    return std::max<int64_t>(1, (l + tile_l_of(config, problem) - 1) / tile_l_of(config, problem));
  }
  // K in KB-deep slices, one for K <= KB.
  static int64_t slices_of(const KernelConfig& config, const Problem& problem) {
    const int64_t kb = config.get("KB");
    return problem.k > kb ? (problem.k + kb - 1) / kb : 1;
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_gemv_mma_template(KernelSource source) {
  return std::make_unique<GemvMma>(std::move(source));
}

}  // namespace tgemm
