// Host side of gemv_mma (kernel_templates/gemv_mma.cuh, configs/spaces/gemv_mma.yaml): GEMM
// with at most 16 rows of C on tensor cores (tf32 or f32x3), B streamed once along N into mma
// fragments; K slices add into C through f32 atomics after C = beta * C.
#include <fmt/format.h>

#include <algorithm>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

namespace {

class GemvMma final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  std::optional<std::string> types_unsupported(const GemmTypes& types,
                                               const std::string& arch) const override {
    if (std::string why = types.invalid_reason(); !why.empty()) return why;
    const bool f32 = types.a == DType::f32 && types.b == DType::f32 && types.c == DType::f32;
    if (!f32 || (types.compute != ComputeType::tf32 && types.compute != ComputeType::f32x3))
      return fmt::format(
          "{} computes f32 as tf32 or f32x3 on tensor cores, not {} (FFMA-accurate f32 is "
          "a CUDA-core family's)",
          name(), types.name());
    if (arch_number(arch) < 80)
      return fmt::format("{} needs tf32 tensor cores (sm_80 or later), not {}", name(), arch);
    return std::nullopt;
  }

  std::optional<std::string> unsupported_reason(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const override {
    if (auto why = foreign_or_wrong_types(config, problem, arch)) return why;
    if (problem.m > kRows)
      return fmt::format(
          "{} computes M <= {} (have M = {}): larger problems belong to the GEMM families", name(),
          kRows, problem.m);
    if (problem.op_b != Op::N)
      return fmt::format("{} streams B stored K x N (along N); B^T is stored N x K", name());
    if (problem.align_b % 16 != 0)
      return fmt::format("{} reads B with 16-byte loads: B must be aligned to 16 bytes (have {})",
                         name(), problem.align_b);
    if (slices_of(config, problem) > kMaxGridY)
      return fmt::format("K = {} needs {} slices of KB={}; a grid holds at most {}", problem.k,
                         slices_of(config, problem), config.get("KB"), kMaxGridY);
    if (strips_of(config, problem) > kMaxGridX)
      return fmt::format("N = {} needs more than {} blocks", problem.n, kMaxGridX);
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig&) const override {
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

  // A's slice as fragments: a 16-byte word per lane and k8-step, twice for f32x3's small parts
  // (sized for f32x3, the larger).
  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads = int(32 * config.get("WARPS"));
    r.dynamic_smem_bytes = size_t(2 * (config.get("KB") / 8) * 32 * 16);
    return r;
  }

  bool bandwidth_bound() const override { return true; }

  // The sums (16 per group of 32 columns), B one step ahead (16), and addressing.
  int estimated_registers(const KernelConfig& config, const Problem&) const override {
    return int(std::min<int64_t>(255, 32 * config.get("LW") + 30));
  }

  // The 16 rows of the mma along M, a block's strip along N, KB deep.
  TileShape tile(const KernelConfig& config) const override {
    return {kRows, tile_n_of(config), config.get("KB"), 1, 1};
  }

 private:
  static constexpr int64_t kRows = 16;  // the mma's M
  static constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
  static constexpr int64_t kMaxGridY = 65535;

  // The kernel's TILE_N: columns of C per block.
  static int64_t tile_n_of(const KernelConfig& config) {
    return 32 * config.get("WARPS") * config.get("LW");
  }
  static int64_t strips_of(const KernelConfig& config, const Problem& problem) {
    return std::max<int64_t>(1, (problem.n + tile_n_of(config) - 1) / tile_n_of(config));
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
