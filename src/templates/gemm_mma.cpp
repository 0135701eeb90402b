// Host side of gemm_mma (kernel_templates/gemm_mma.cuh, configs/spaces/gemm_mma.yaml):
// tensor cores through mma.sync for f16 / bf16 (C in the input type or f32), tf32 and
// f32x3; one BM x BN tile per block, split-K through f32 atomics; PACK=1 packs A and B into
// the workspace first (kernel_templates/common/pack_operand.cuh), for any alignment. Batches and
// grouped GEMMs in configs of one launch.
#include <fmt/format.h>

#include <algorithm>

#include "kernel_templates/common/pack_layout.h"
#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

namespace {

// Shared-memory bytes of one operand's tile of `rows` x `cols` elements (cols contiguous).
int64_t tile_bytes(int64_t rows, int64_t cols, int64_t element, bool xor_layout) {
  return rows * (cols * element + (xor_layout ? 0 : 16));
}

class GemmMma final : public GemmTemplate {
 public:
  using GemmTemplate::GemmTemplate;

  const FamilyTypes& computed_types() const override {
    static const FamilyTypes types{
        {{"f16", 75},
         {"f16_out_f32", 75},
         {"bf16", 80},
         {"bf16_out_f32", 80},
         {"tf32", 80},
         {"f32x3", 80}},
        "mma.sync tensor cores: sm_75 has f16 tensor cores only (mma m16n8k8); FFMA-accurate "
        "f32 is a CUDA-core family's"};
    return types;
  }

  // What the space (which does not know the type) allows but these types cannot build: their
  // static_asserts would fail, so the tuner leaves such configs out before compiling.
  std::optional<std::string> types_unsupported_by(const KernelConfig& config,
                                                  const GemmTypes& types,
                                                  const std::string&) const override {
    const int64_t vec = config.get("VEC_BYTES"), element = element_bytes(types.a);
    if (vec < element)
      return fmt::format("VEC_BYTES={} is less than one {} element ({} bytes)", vec,
                         to_string(types.a), element);
    if (config.get("SPLIT_K") > 1 && types.c != DType::f32)
      return fmt::format("SPLIT_K={} adds slices into C with f32 atomics; C is {} (use SPLIT_K=1)",
                         config.get("SPLIT_K"), to_string(types.c));
    if (config.get_or("PACK", 0) == 2 && types.a != DType::f32)
      return fmt::format(
          "PACK=2 transposes f32 operands (tf32, f32x3); {} reads either layout through "
          "ldmatrix: use PACK=1",
          types.name());
    return std::nullopt;
  }

  // The main kernel takes its member of a batch from blockIdx.z, and its problem and tile of a
  // grouped GEMM from the launch's table (common/batch.cuh).
  std::optional<std::string> batch_unsupported(const KernelConfig&, const Problem&) const override {
    return std::nullopt;
  }
  std::optional<std::string> grouped_unsupported(const KernelConfig&,
                                                 const Problem&) const override {
    return std::nullopt;
  }
  std::optional<std::string> epilogue_unsupported(const KernelConfig& config,
                                                  const Problem& problem) const override {
    return atomic_split_k_epilogue_unsupported(problem, config.get_or("SPLIT_K", 1));
  }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const override {
    if (auto why = types_unsupported_by(config, problem.types, arch)) return why;
    const int64_t vec = config.get("VEC_BYTES"), element = element_bytes(problem.types.a);
    const bool shift = config.get_or("SHIFT_COPY", 0) != 0;
    if (config.get_or("PACK", 0) != 0) {
      if (auto why = pack_unsupported(config, problem)) return why;
    } else {
      if (shift && (vec != 16 || config.get("STAGES") != 2))
        return fmt::format(
            "SHIFT_COPY=1 loads 16-byte words into registers: it needs VEC_BYTES=16 and STAGES=2 "
            "(have {} and {})",
            vec, config.get("STAGES"));
      // Shifted copies read whole aligned words around any element-aligned run.
      const int64_t need = shift ? element : vec;
      if (problem.align_a % need != 0 || problem.align_b % need != 0)
        return fmt::format("VEC_BYTES={} needs A and B aligned to {} bytes (have {} and {})", vec,
                           need, problem.align_a, problem.align_b);
    }
    if (arch_number(arch) < 80 && config.get("STAGES") != 2)
      return fmt::format("STAGES={} needs cp.async (sm_80); {} runs STAGES=2 only",
                         config.get("STAGES"), arch);
    if (config.get("VEC_BYTES") < 4 && config.get("STAGES") != 2)
      return fmt::format("VEC_BYTES={} has no cp.async form: STAGES=2 only", vec);
    return std::nullopt;
  }

  std::vector<std::string> entries(const KernelConfig& config, const GemmTypes&) const override {
    if (config.get_or("PACK", 0) != 0)
      return {name(), name() + "_prepare_c", name() + "_pack_a", name() + "_pack_b"};
    return {name(), name() + "_prepare_c"};
  }

  // Split-K slices add into C, so C = beta * C runs first; PACK's copies before the main launch.
  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem, int) const override {
    const TileShape t = tile(config);
    LaunchPlan plan;
    if (t.split_k > 1) plan.add(scale_c_launch(problem, 1));
    const int e = element_bytes(problem.types.a);
    if (config.get_or("PACK", 0) != 0) {
      const Packed packed = packed_operands(config, problem);
      plan.add(pack_launch(packed.a, e, packed.transpose_a, 2));
      plan.add(pack_launch(packed.b, e, packed.transpose_b, 3));
      plan.workspace_bytes = size_t(packed.a.bytes + packed.b.bytes);
    }
    // The layout the main kernel reads: PACK=2 makes f32 A [m][k] and B [n][k].
    const bool k_contiguous = config.get_or("PACK", 0) == 2 && e == 4;
    plan.add(tiled_launch(t, problem, block_resources(config).threads,
                          smem_bytes(config, e, problem.op_a == Op::T && !k_contiguous,
                                     problem.op_b == Op::T || k_contiguous)));
    return plan;
  }

  // The shared memory of the largest variant (2-byte elements, K-major tiles): the opt-in.
  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads = int((config.get("BM") / config.divisor("WM")) *
                    (config.get("BN") / config.divisor("WN")) * 32);
    for (int element : {2, 4})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          r.dynamic_smem_bytes =
              std::max(r.dynamic_smem_bytes, smem_bytes(config, element, ta, tb));
    return r;
  }

  KernelDescription describe(const KernelConfig& config, const Problem&) const override {
    return tiled_description(tile(config), copy_bytes(config));
  }

  int copy_bytes(const KernelConfig& config) const { return int(config.get("VEC_BYTES")); }

  // K depth in 16-bit elements (f32 slices are half as deep).
  TileShape tile(const KernelConfig& config) const {
    return {config.get("BM"), config.get("BN"), config.get("BK_BYTES") / 2,
            config.get_or("SPLIT_K", 1), 1};
  }

 private:
  struct Packed {
    PackedLayout a, b;
    bool transpose_a = false, transpose_b = false;  // PACK=2 of a K-major f32 operand
  };
  // A and B as the kernel's packed_a / packed_b lay them out in the workspace (B after A):
  // in the caller's layout, or PACK=2's f32 A [m][k] and B [n][k].
  static Packed packed_operands(const KernelConfig& config, const Problem& p) {
    const int e = element_bytes(p.types.a);
    const int bm = int(config.get("BM")), bn = int(config.get("BN"));
    const int bk = int(config.get("BK_BYTES")) / e;
    const bool k_contiguous = config.get_or("PACK", 0) == 2 && e == 4;
    const bool a_t = p.op_a == Op::T && !k_contiguous, b_t = p.op_b == Op::T || k_contiguous;
    Packed out;
    out.a = a_t ? packed_layout(p.k, p.m, bk, bm, e) : packed_layout(p.m, p.k, bm, bk, e);
    out.b = b_t ? packed_layout(p.n, p.k, bn, bk, e) : packed_layout(p.k, p.n, bk, bn, e);
    out.transpose_a = a_t != (p.op_a == Op::T);
    out.transpose_b = b_t != (p.op_b == Op::T);
    return out;
  }

  // PACK reads any element-aligned A and B (the packs take them) and 16-byte copies of the
  // packed copies in the main loop; its workspace is A and B again, capped.
  std::optional<std::string> pack_unsupported(const KernelConfig& config,
                                              const Problem& problem) const {
    const int64_t pack = config.get("PACK");
    if (pack != 1 && pack != 2) return fmt::format("PACK={} is not 0, 1 or 2", pack);
    if (config.get("VEC_BYTES") != 16 || config.get_or("SHIFT_COPY", 0) != 0)
      return fmt::format(
          "PACK={} reads the packed copies with 16-byte copies: it needs VEC_BYTES=16 and "
          "SHIFT_COPY=0 (have {} and {})",
          pack, config.get("VEC_BYTES"), config.get_or("SHIFT_COPY", 0));
    const int64_t element = element_bytes(problem.types.a);
    if (problem.align_a % element != 0 || problem.align_b % element != 0)
      return fmt::format("PACK={} needs A and B aligned to one element ({} bytes; have {} and {})",
                         pack, element, problem.align_a, problem.align_b);
    const Packed packed = packed_operands(config, problem);
    const size_t bytes = size_t(packed.a.bytes + packed.b.bytes);
    if (bytes > kMaxPackWorkspaceBytes)
      return fmt::format(
          "PACK={} needs {} MiB of workspace for the packed A and B of {}x{}x{} (at most {} MiB)",
          pack, bytes >> 20, problem.m, problem.n, problem.k, kMaxPackWorkspaceBytes >> 20);
    return std::nullopt;
  }

  // The kernel's STAGES x (A tile + B tile), as SmemTile lays them out.
  static size_t smem_bytes(const KernelConfig& config, int64_t element, bool t_a, bool t_b) {
    const int64_t bm = config.get("BM"), bn = config.get("BN");
    const int64_t bk = config.get("BK_BYTES") / element;
    const bool x = config.get("SMEM_XOR") != 0;
    const int64_t a = t_a ? tile_bytes(bk, bm, element, x) : tile_bytes(bm, bk, element, x);
    const int64_t b = t_b ? tile_bytes(bn, bk, element, x) : tile_bytes(bk, bn, element, x);
    return size_t(config.get("STAGES") * (a + b));
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_gemm_mma_template(KernelSource source) {
  return std::make_unique<GemmMma>(std::move(source));
}

}  // namespace tgemm
