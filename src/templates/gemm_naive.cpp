// Host side of gemm_naive (kernel_templates/gemm_naive.cuh, configs/spaces/gemm_naive.yaml):
// one thread per element of C, every type tgemm defines, any alignment.
#include <fmt/format.h>

#include "src/templates/gemm_template.h"

namespace tgemm {

namespace {

class GemmNaive final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  // Every valid GemmTypes: the kernel converts each element to f32 and accumulates in f32.
  const FamilyTypes& computed_types() const override {
    static const FamilyTypes types{{{"f32", 75},
                                    {"tf32", 75},
                                    {"f32x3", 75},
                                    {"f16", 75},
                                    {"f16_out_f32", 75},
                                    {"bf16", 75},
                                    {"bf16_out_f32", 75}},
                                   ""};
    return types;
  }

  // Scalar loads and stores: no alignment beyond one element.
  // The main kernel takes its member of a batch from blockIdx.z (common/batch.cuh).
  std::optional<std::string> batch_unsupported(const KernelConfig&, const Problem&) const override {
    return std::nullopt;
  }
  std::optional<std::string> epilogue_unsupported(const KernelConfig&,
                                                  const Problem&) const override {
    return std::nullopt;
  }

  std::optional<std::string> config_unsupported(const KernelConfig&, const Problem&,
                                                const std::string&) const override {
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig&, const GemmTypes&) const override {
    return {name()};
  }

  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem, int) const override {
    const int64_t bx = config.get("BLOCK_X"), by = config.get("BLOCK_Y");
    KernelLaunch launch;
    launch.grid[0] = unsigned((problem.n + bx - 1) / bx);
    launch.grid[1] = unsigned((problem.m + by - 1) / by);
    launch.block[0] = unsigned(bx * by);
    LaunchPlan plan;
    plan.add(launch);
    return plan;
  }

  BlockResources block_resources(const KernelConfig& config) const override {
    return {int(config.get("BLOCK_X") * config.get("BLOCK_Y")), 0};
  }

  KernelDescription describe(const KernelConfig& config, const Problem&) const override {
    return tiled_description(tile(config));
  }

  // A block covers BLOCK_Y x BLOCK_X of C and walks K one element at a time.
  TileShape tile(const KernelConfig& config) const {
    return {config.get("BLOCK_Y"), config.get("BLOCK_X"), 1, 1, 1};
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_gemm_naive_template(KernelSource source) {
  return std::make_unique<GemmNaive>(std::move(source));
}

}  // namespace tgemm
