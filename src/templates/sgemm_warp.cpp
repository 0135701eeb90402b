// Host side of sgemm_warp (kernel_templates/sgemm_warp.cuh, configs/spaces/sgemm_warp.yaml):
// warp-tiled FP32 GEMM on the CUDA cores with a cp.async pipeline, split-K through atomics.
#include <fmt/format.h>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

namespace {

class SgemmWarp final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  std::optional<std::string> types_unsupported(const GemmTypes& types,
                                               const std::string&) const override {
    return unless_ffma_f32(types);  // FFMA: every arch tgemm targets
  }

  // Only an operand stored m- or n-contiguous (A in T layout, B in N layout) is copied VEC
  // floats at a time; a k-contiguous one is transposed by 4-byte copies and needs no more.
  std::optional<std::string> unsupported_reason(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const override {
    if (auto why = foreign_or_wrong_types(config, problem, arch)) return why;
    // The space refuses these too; the dispatcher's `*` default lines meet this check only.
    if (config.get("STAGES") > 2 && arch_number(arch) < 80)
      return fmt::format("STAGES={} needs cp.async (sm_80 or later), not {}", config.get("STAGES"),
                         arch);
    const int64_t vec = config.get("VEC"), vec_bytes = vec * int64_t(sizeof(float));
    if (problem.op_a == Op::T && problem.align_a % vec_bytes != 0)
      return fmt::format("VEC={} needs A (T layout) aligned to {} bytes (have {})", vec, vec_bytes,
                         problem.align_a);
    if (problem.op_b == Op::N && problem.align_b % vec_bytes != 0)
      return fmt::format("VEC={} needs B (N layout) aligned to {} bytes (have {})", vec, vec_bytes,
                         problem.align_b);
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig&) const override {
    return {name(), name() + "_prepare_c"};
  }

  // Split-K slices add into C, so C = beta * C runs first.
  LaunchPlan plan_launch(const KernelConfig& config, const Problem& problem) const override {
    const TileShape t = tile(config);
    LaunchPlan plan;
    if (t.split_k > 1) plan.add(scale_c_launch(problem, 1));
    const BlockResources r = block_resources(config);
    plan.add(tiled_launch(t, problem, r.threads, r.dynamic_smem_bytes));
    return plan;
  }

  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    const int64_t warps =
        (config.get("BM") / config.get("WM")) * (config.get("BN") / config.get("WN"));
    r.threads = int(warps * 32);
    // Shared rows are padded by 4 floats (SMEM_PAD in the template) in both operands.
    const int64_t floats =
        config.get("STAGES") * config.get("BK") * (config.get("BM") + config.get("BN") + 8);
    r.dynamic_smem_bytes = size_t(floats) * sizeof(float);
    return r;
  }

  TileShape tile(const KernelConfig& config) const override {
    return tile_from_block_params(config);
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_sgemm_warp_template(KernelSource source) {
  return std::make_unique<SgemmWarp>(std::move(source));
}

}  // namespace tgemm
