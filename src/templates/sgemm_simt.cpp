// Host side of sgemm_simt (kernel_templates/sgemm_simt.cuh, configs/spaces/sgemm_simt.yaml):
// FP32 GEMM on the CUDA cores, one BM x BN tile per block, split-K through atomics
// (SPLIT_MODE=0) or the deterministic workspace reduction (SPLIT_MODE=1, common/split_k.cuh).
#include <fmt/format.h>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

namespace {

class SgemmSimt final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  const FamilyTypes& computed_types() const override { return ffma_f32(); }

  // The main kernel takes its member of a batch from blockIdx.z (common/batch.cuh).
  std::optional<std::string> batch_unsupported(const KernelConfig&, const Problem&) const override {
    return std::nullopt;
  }
  // The deterministic split's reduction applies the epilogue, once, on the whole sums.
  std::optional<std::string> epilogue_unsupported(const KernelConfig& config,
                                                  const Problem& problem) const override {
    if (deterministic_split(config)) return std::nullopt;
    return atomic_split_k_epilogue_unsupported(problem, tile(config).split_k);
  }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string&) const override {
    const int64_t vec_bytes = config.get("VEC") * int64_t(sizeof(float));
    if (problem.align_a % vec_bytes != 0 || problem.align_b % vec_bytes != 0)
      return fmt::format("VEC={} needs A and B aligned to {} bytes (have {} and {})",
                         config.get("VEC"), vec_bytes, problem.align_a, problem.align_b);
    if (deterministic_split(config))
      return split_k_workspace_unsupported(problem, tile(config).split_k);
    return std::nullopt;
  }

  // Configs stored before SPLIT_MODE existed have none: they are atomics (0).
  static bool deterministic_split(const KernelConfig& config) {
    return config.get_or("SPLIT_MODE", 0) == 1 && config.get_or("SPLIT_K", 1) > 1;
  }

  std::vector<std::string> entries(const KernelConfig& config, const GemmTypes&) const override {
    std::vector<std::string> out{name(), name() + "_prepare_c"};
    if (config.get_or("SPLIT_MODE", 0) == 1) out.push_back(name() + "_reduce");
    return out;
  }

  // Atomic split-K slices add into C, so C = beta * C runs first; deterministic ones write
  // the workspace, which the reduce launch then sums into C.
  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem, int) const override {
    const TileShape t = tile(config);
    LaunchPlan plan;
    if (t.split_k > 1 && !deterministic_split(config)) plan.add(scale_c_launch(problem, 1));
    const BlockResources r = block_resources(config);
    plan.add(tiled_launch(t, problem, r.threads, r.dynamic_smem_bytes));
    if (deterministic_split(config)) add_split_k_reduce(&plan, problem, t.split_k, 2);
    return plan;
  }

  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads =
        int((config.get("BM") / config.divisor("TM")) * (config.get("BN") / config.divisor("TN")));
    const int64_t floats =
        config.get("STAGES") * config.get("BK") *
        (config.get("BM") + config.get("PAD_A") + config.get("BN") + config.get("PAD_B"));
    r.dynamic_smem_bytes = size_t(floats) * sizeof(float);
    return r;
  }

  KernelDescription describe(const KernelConfig& config, const Problem&) const override {
    return tiled_description(tile(config), copy_bytes(config));
  }

  int copy_bytes(const KernelConfig& config) const { return int(4 * config.get("VEC")); }

  TileShape tile(const KernelConfig& config) const { return tile_from_block_params(config); }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_sgemm_simt_template(KernelSource source) {
  return std::make_unique<SgemmSimt>(std::move(source));
}

}  // namespace tgemm
