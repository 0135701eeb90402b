// Host side of gemm_wgmma (kernel_templates/gemm_wgmma.cuh, configs/spaces/gemm_wgmma.yaml):
// Hopper's warpgroup tensor cores (wgmma, built for sm_90a and stored as sm_90's) for f16 /
// bf16 (C in the input type or f32), tf32 and f32x3 (3xTF32); one BM x BN tile per block of
// WGS warpgroups. 16-bit operands are read in place with 16-byte copies (A and B aligned to 16
// bytes), or with PACK=1 copied first into the workspace in their own layout (any element
// alignment); f32 ones are packed K-major into the workspace (common/pack_operand.cuh), except
// with tf32 PACK=2, which reads K-major operands in place with 4-byte copies and packs only an
// MN-major one (NT: no pack); f32x3 as two planes (tf32 big and small parts), which doubles the
// workspace, the shared memory per stage and the accumulators. SPLIT_K > 1 cuts K over gridDim.z,
// each block adding its sum into an f32 C with atomics after a C = beta * C launch.
#include <fmt/format.h>

#include "kernel_templates/common/pack_layout.h"
#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"
#include "src/templates/wgmma_family.h"

namespace tgemm {

namespace {

class GemmWgmma final : public wgmma_family::WgmmaFamily {
 public:
  explicit GemmWgmma(KernelSource source) : WgmmaFamily(std::move(source), true, false) {}

  // The main kernel takes its member of a batch from blockIdx.z (common/batch.cuh).
  std::optional<std::string> batch_unsupported(const KernelConfig&, const Problem&) const override {
    return std::nullopt;
  }
  std::optional<std::string> epilogue_unsupported(const KernelConfig& config,
                                                  const Problem& problem) const override {
    return atomic_split_k_epilogue_unsupported(problem, split_k(config));
  }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const override {
    const int64_t pack = config.get_or("PACK", 0);
    if (pack < 0 || pack > 2) return fmt::format("PACK={} is not 0, 1 or 2", pack);
    if (split_k(config) < 1) return fmt::format("SPLIT_K={} is not at least 1", split_k(config));
    if (auto why = types_unsupported_by(config, problem.types, arch)) return why;
    if (problem.types.a != DType::f32) {
      if (pack == 0 && (problem.align_a % 16 != 0 || problem.align_b % 16 != 0))
        return fmt::format(
            "{} PACK=0 copies A and B with 16-byte cp.async: they need 16-byte aligned pointers "
            "and leading dimensions (have {} and {} bytes; PACK=1 packs them first)",
            name(), problem.align_a, problem.align_b);
      if (problem.align_a % 2 != 0 || problem.align_b % 2 != 0)
        return fmt::format("PACK=1 needs A and B aligned to one element (2 bytes; have {} and {})",
                           problem.align_a, problem.align_b);
      return pack == 0 ? std::nullopt : workspace_unsupported(config, problem);
    }
    if (problem.align_a % 4 != 0 || problem.align_b % 4 != 0)
      return fmt::format(
          "{} reads f32 A and B by whole elements (the pack, or PACK=2's 4-byte copies): they "
          "need 4-byte aligned pointers and leading dimensions (have {} and {} bytes)",
          name(), problem.align_a, problem.align_b);
    return workspace_unsupported(config, problem);
  }

  // What the space (which does not know the type) allows but these types cannot use: split-K
  // into a 16-bit C, PACK=1 of f32 operands, PACK=2 of anything but tf32, and f32x3 configs
  // whose second accumulator set or plane does not fit.
  std::optional<std::string> types_unsupported_by(const KernelConfig& config,
                                                  const GemmTypes& types,
                                                  const std::string& arch) const override {
    if (split_k(config) > 1 && types.c != DType::f32)
      return fmt::format(
          "SPLIT_K={} adds each block's K slices into C with f32 atomics; C is {} (split-K "
          "serves an f32 C: tf32, f32x3, f16_out_f32, bf16_out_f32; use SPLIT_K=1)",
          split_k(config), to_string(types.c));
    // One kernel, one measurement: PACK=1 of f32 operands builds the PACK=0 kernel.
    if (types.a == DType::f32 && config.get_or("PACK", 0) == 1)
      return fmt::format(
          "{} packs f32 operands with PACK=0 (K-major, rounded to tf32; tf32 PACK=2 reads the "
          "K-major ones in place): PACK=1 would measure the PACK=0 kernel of {} again; PACK=1 "
          "is for f16 and bf16",
          name(), types.name());
    if (config.get_or("PACK", 0) == 2 && types.compute != ComputeType::tf32)
      return fmt::format(
          "PACK=2 reads K-major tf32 operands in place (4-byte copies) and packs the others: "
          "tf32 only, not {} ({})",
          types.name(),
          types.compute == ComputeType::f32x3 ? "f32x3 splits each operand in its pack"
                                              : "16-bit operands take PACK=0 or PACK=1");
    if (types.compute != ComputeType::f32x3) return std::nullopt;
    const int64_t accumulators =
        config.get("BM") / config.divisor("WGS") / 64 * config.get("BN") / 2 * 2;
    if (accumulators > 128)
      return fmt::format(
          "f32x3 sums each slice in a second accumulator set: {} f32 accumulators per thread "
          "for BM={} BN={} WGS={} (at most 128: BM / WGS / 64 * BN / 2 <= 64)",
          accumulators, config.get("BM"), config.get("BN"), config.get("WGS"));
    const size_t smem = smem_bytes(config, 2);
    const size_t limit = size_t(arch_limits(arch).smem_per_block_optin);
    if (smem > limit)
      return fmt::format(
          "f32x3 stages big and small planes of A and B: {} bytes of shared memory for "
          "STAGES={} BM={} BN={} (at most {} on {})",
          smem, config.get("STAGES"), config.get("BM"), config.get("BN"), limit, arch);
    return std::nullopt;
  }

  // The packs keep entries 1 and 2; split-K's C = beta * C pass is entry 3.
  std::vector<std::string> entries(const KernelConfig& config, const GemmTypes&) const override {
    std::vector<std::string> out = {name(), name() + "_pack_a", name() + "_pack_b"};
    if (split_k(config) > 1) out.push_back(name() + "_prepare_c");
    return out;
  }

  // tf32: A packed as [m][k] and B as [n][k] (transposing the MN-major ones) before the
  // main launch, with PACK=2 only the MN-major ones; f32x3: each pack's gridDim.z = 2 writes
  // the big plane (z 0), then the small. 16-bit PACK=1: both copied as stored (the wgmma
  // transpose bits read MN-major tiles).
  // Split-K: C = beta * C first (the blocks add into it), the main launch's grid z = SPLIT_K.
  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem, int) const override {
    LaunchPlan plan;
    // Every launch after the first starts early. The packs read only A and B and write their
    // own part of the workspace, so a pack runs beside the launch before it, and waits for
    // that grid only before it ends: its end then implies the end of every launch before it,
    // which the main launch's wait (on its direct predecessor alone) relies on. The main
    // launch's blocks are resident when the last of them ends, and wait for it in the kernel.
    const auto add = [&plan](KernelLaunch launch) {
      launch.early = plan.count > 0;
      plan.add(launch);
    };
    if (split_k(config) > 1) add(scale_c_launch(problem, kPrepareEntry));
    const int planes = planes_of(problem);
    const Packed packed = packed_operands(config, problem);
    const int e = element_bytes(problem.types.a);
    const bool f32 = e == 4;
    if (packs_a(config, problem)) {
      KernelLaunch a = pack_launch(packed.a, e, f32 && problem.op_a == Op::T, 1);
      a.grid[2] = unsigned(planes);
      add(a);
    }
    if (packs_b(config, problem)) {
      KernelLaunch b = pack_launch(packed.b, e, f32 && problem.op_b == Op::N, 2);
      b.grid[2] = unsigned(planes);
      add(b);
    }
    plan.workspace_bytes = workspace_bytes(config, problem);
    const BlockResources r = block_resources(config);
    add(tiled_launch(tile(config), problem, r.threads, smem_bytes(config, planes)));
    return plan;
  }

  // STAGES x (A + B) rows of 128 bytes, whatever the type and layout, plus the alignment slack:
  // one plane. f32x3's two planes are in its plan (main_smem_opt_in opts in to them).
  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads = int(config.get("WGS") * 128);
    r.dynamic_smem_bytes = smem_bytes(config, 1);
    return r;
  }

 private:
  struct Packed {
    PackedLayout a, b;
  };
  static constexpr int kPrepareEntry = 3;  // gemm_wgmma_prepare_c, after the packs
  // Configs stored before SPLIT_K existed run unsplit.
  static int planes_of(const Problem& p) { return p.types.compute == ComputeType::f32x3 ? 2 : 1; }
  // Whether each operand goes through the workspace: 16-bit ones with PACK=1; f32 ones
  // always, except K-major ones with PACK=2 (A stored [m][k]: op N; B stored [n][k]: op T).
  static bool packs_operand(const KernelConfig& config, const Problem& p, bool k_major) {
    const int64_t pack = config.get_or("PACK", 0);
    return p.types.a == DType::f32 ? pack != 2 || !k_major : pack == 1;
  }
  static bool packs_a(const KernelConfig& c, const Problem& p) {
    return packs_operand(c, p, p.op_a == Op::N);
  }
  static bool packs_b(const KernelConfig& c, const Problem& p) {
    return packs_operand(c, p, p.op_b == Op::T);
  }
  static size_t smem_bytes(const KernelConfig& config, int planes) {
    return size_t(planes * config.get("STAGES") * (config.get("BM") + config.get("BN")) *
                      wgmma_family::kRowBytes +
                  wgmma_family::kAlignSmem);
  }
  static size_t workspace_bytes(const KernelConfig& config, const Problem& p) {
    const Packed packed = packed_operands(config, p);
    const int64_t a = packs_a(config, p) ? packed.a.bytes : 0;
    const int64_t b = packs_b(config, p) ? packed.b.bytes : 0;
    return size_t(planes_of(p) * (a + b));
  }
  std::optional<std::string> workspace_unsupported(const KernelConfig& config,
                                                   const Problem& p) const {
    const size_t bytes = workspace_bytes(config, p);
    if (bytes <= kMaxPackWorkspaceBytes) return std::nullopt;
    return fmt::format("{} packs A and B: {} MiB of workspace for {}x{}x{} (at most {} MiB)",
                       p.types.name(), bytes >> 20, p.m, p.n, p.k, kMaxPackWorkspaceBytes >> 20);
  }
  // The packed copies as the kernel's packed_a / packed_b lay them out (B after A): tf32
  // K-major, [m][k] and [n][k]; 16-bit in the caller's layout ([k][m] for a T-layout A, [k][n]
  // for an N-layout B). Keeping the layout makes the 16-bit pack a plain copy.
  static Packed packed_operands(const KernelConfig& config, const Problem& p) {
    const int e = element_bytes(p.types.a), bk = int(wgmma_family::kRowBytes / e);
    const int bm = int(config.get("BM")), bn = int(config.get("BN"));
    const bool a_k_major = e == 4 || p.op_a == Op::N, b_k_major = e == 4 || p.op_b == Op::T;
    return {a_k_major ? packed_layout(p.m, p.k, bm, bk, e) : packed_layout(p.k, p.m, bk, bm, e),
            b_k_major ? packed_layout(p.n, p.k, bn, bk, e) : packed_layout(p.k, p.n, bk, bn, e)};
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_gemm_wgmma_template(KernelSource source) {
  return std::make_unique<GemmWgmma>(std::move(source));
}

}  // namespace tgemm
