// Host side of sgemm_warp (kernel_templates/sgemm_warp.cuh, configs/spaces/sgemm_warp.yaml):
// warp-tiled FP32 GEMM on the CUDA cores with a cp.async pipeline, split-K through atomics;
// PACK_B=1 first copies B into the workspace as [k][n] (common/pack_operand.cuh), so a
// k-contiguous or misaligned B is read with VEC-wide copies. TAIL_SPLIT > 1 cuts the tiles past
// the last whole wave into K slices (common/stream_tail.h), summed by each tile's last slice.
#include <fmt/format.h>

#include "kernel_templates/common/stream_tail.h"
#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

namespace {

class SgemmWarp final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  const FamilyTypes& computed_types() const override { return ffma_f32(); }

  // Only an operand stored m- or n-contiguous (A in T layout, B in N layout) is copied VEC
  // floats at a time; a k-contiguous one is transposed by 4-byte copies and needs no more.
  // The main kernel takes its member of a batch from blockIdx.z (common/batch.cuh); a stream
  // tail balances one GEMM's tiles over the GPU, not a batch's.
  std::optional<std::string> batch_unsupported(const KernelConfig& config,
                                               const Problem&) const override {
    if (config.get_or("TAIL_SPLIT", 1) > 1)
      return fmt::format("TAIL_SPLIT={} balances one GEMM's last wave: a batch needs TAIL_SPLIT=1",
                         config.get("TAIL_SPLIT"));
    return std::nullopt;
  }

  // A stream tail's last slice to arrive stores the tile, epilogue included.
  std::optional<std::string> epilogue_unsupported(const KernelConfig& config,
                                                  const Problem& problem) const override {
    return atomic_split_k_epilogue_unsupported(problem, config.get("SPLIT_K"));
  }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const override {
    // The space refuses these too; the dispatcher's `*` default lines meet this check only.
    if (config.get("STAGES") > 2 && arch_number(arch) < 80)
      return fmt::format("STAGES={} needs cp.async (sm_80 or later), not {}", config.get("STAGES"),
                         arch);
    const int64_t vec = config.get("VEC"), vec_bytes = vec * int64_t(sizeof(float));
    if (problem.op_a == Op::T && problem.align_a % vec_bytes != 0)
      return fmt::format("VEC={} needs A (T layout) aligned to {} bytes (have {})", vec, vec_bytes,
                         problem.align_a);
    if (config.get_or("TAIL_SPLIT", 1) > 1 && config.get("SPLIT_K") > 1)
      return std::string("SPLIT_K and TAIL_SPLIT cannot both cut K");
    if (config.get_or("PACK_B", 0) != 0) return pack_b_unsupported(config, problem);
    if (problem.op_b == Op::N && problem.align_b % vec_bytes != 0)
      return fmt::format("VEC={} needs B (N layout) aligned to {} bytes (have {})", vec, vec_bytes,
                         problem.align_b);
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig& config, const GemmTypes&) const override {
    if (config.get_or("PACK_B", 0) != 0) return {name(), name() + "_prepare_c", name() + "_pack_b"};
    return {name(), name() + "_prepare_c"};
  }

  // The pack of B first (PACK_B); split-K slices add into C, so C = beta * C runs next.
  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem,
                       int sm_count) const override {
    const TileShape t = tile(config);
    LaunchPlan plan;
    if (config.get_or("PACK_B", 0) != 0) {
      const PackedLayout b = packed_b(config, problem);
      plan.add(pack_launch(b, 4, problem.op_b == Op::T, 2));
      plan.workspace_bytes = size_t(b.bytes);
    }
    if (t.split_k > 1) plan.add(scale_c_launch(problem, 1));
    const BlockResources r = block_resources(config);
    KernelLaunch main = tiled_launch(t, problem, r.threads, r.dynamic_smem_bytes);
    if (t.tail_split > 1) add_stream_tail(t, sm_count, &main, &plan);
    plan.add(main);
    return plan;
  }

  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    const int64_t warps =
        (config.get("BM") / config.divisor("WM")) * (config.get("BN") / config.divisor("WN"));
    r.threads = int(warps * 32);
    // Shared rows are padded by 4 floats (SMEM_PAD in the template) in both operands.
    const int64_t floats =
        config.get("STAGES") * config.get("BK") * (config.get("BM") + config.get("BN") + 8);
    r.dynamic_smem_bytes = size_t(floats) * sizeof(float);
    return r;
  }

  KernelDescription describe(const KernelConfig& config, const Problem&) const override {
    return tiled_description(tile(config), copy_bytes(config));
  }

  int copy_bytes(const KernelConfig& config) const { return int(4 * config.get("VEC")); }

  TileShape tile(const KernelConfig& config) const {
    TileShape t = tile_from_block_params(config);
    t.tail_split = config.get_or("TAIL_SPLIT", 1);
    return t;
  }

 private:
  // TAIL_SPLIT > 1: the main launch becomes a 1-D grid of the whole tiles and, where the tiles
  // end in a partial wave of sm_count x MIN_BLOCKS slots, that wave's tiles once per K slice;
  // the slices' partial tiles follow the packed B in the workspace. Unknown SMs, or a tail whose
  // partials would not fit kMaxSplitKWorkspaceBytes: every tile whole, in the same 1-D grid.
  static void add_stream_tail(const TileShape& t, int sm_count, KernelLaunch* main,
                              LaunchPlan* plan) {
    const int64_t tiles = int64_t(main->grid[0]) * main->grid[1];
    int64_t tail = stream_tail_tiles(tiles, int64_t(sm_count) * t.blocks_per_sm);
    const size_t tail_bytes = size_t(tail * t.tail_split * t.m * t.n) * sizeof(float);
    if (tail_bytes > kMaxSplitKWorkspaceBytes) tail = 0;
    main->grid[0] = unsigned(stream_tail_blocks(tiles, tail, int(t.tail_split)));
    main->grid[1] = 1;
    if (tail == 0) return;
    plan->workspace_bytes += tail_bytes;
    plan->module_state = true;  // the tail tiles' arrival counters
  }

  // B as the kernel's packed_b lays it out: K x N, rows padded to whole BK x BN tiles.
  static PackedLayout packed_b(const KernelConfig& config, const Problem& p) {
    return packed_layout(p.k, p.n, int(config.get("BK")), int(config.get("BN")), 4);
  }

  // A pack pays only for a B the main loop cannot read VEC-wide: k-contiguous (T) or
  // misaligned; the pack itself reads any 4-byte aligned B.
  static std::optional<std::string> pack_b_unsupported(const KernelConfig& config,
                                                       const Problem& problem) {
    if (problem.op_b == Op::N && problem.align_b % 16 == 0)
      return std::string(
          "PACK_B=1 packs a B stored k-contiguous (T layout) or not 16-byte aligned; this B is "
          "N layout and aligned, read as it is (PACK_B=0)");
    if (problem.align_b % 4 != 0)
      return fmt::format("PACK_B=1 needs B aligned to 4 bytes (have {})", problem.align_b);
    const PackedLayout b = packed_b(config, problem);
    if (size_t(b.bytes) > kMaxPackWorkspaceBytes)
      return fmt::format(
          "PACK_B=1 needs {} MiB of workspace for the packed B of {}x{} (at most {} MiB)",
          b.bytes >> 20, problem.k, problem.n, kMaxPackWorkspaceBytes >> 20);
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_sgemm_warp_template(KernelSource source) {
  return std::make_unique<SgemmWarp>(std::move(source));
}

}  // namespace tgemm
