// Host side of gemm_tma_wgmma (kernel_templates/gemm_tma_wgmma.cuh,
// configs/spaces/gemm_tma_wgmma.yaml): Hopper's warpgroup tensor cores fed by tensor copies
// (TMA) in a warp-specialized, persistent kernel, built for sm_90a and stored as sm_90's. f16 /
// bf16 (C in the input type or f32), tf32, and FP8 (e4m3 / e5m2, C bf16, f16 or f32, scaled
// per tensor), each in any layout: tf32 and FP8 operands stored MN-major are packed K-major
// into the workspace by a first launch. The plan
// launches one block per SM at most (each walks work units) and names the tensor maps of A and
// B, which the launch encodes for the call's pointers (a cluster's CLUSTER blocks along M share
// B's tiles, its CLUSTER_N blocks along N share A's); SPLIT_K > 1 adds the reduction launch.
#include <fmt/format.h>

#include <algorithm>

#include "src/core/arch_limits.h"
#include "src/templates/gemm_template.h"
#include "src/templates/wgmma_family.h"

namespace tgemm {

namespace {

constexpr int64_t kChunkRows = 64;  // rows of C per staged chunk (TMA_STORE)
// The kernel's FP8 static_assert: two sets of accumulators per thread fit its registers.
constexpr int64_t kFp8MaxAccumulators = 96;

class GemmTmaWgmma final : public wgmma_family::WgmmaFamily {
 public:
  explicit GemmTmaWgmma(KernelSource source) : WgmmaFamily(std::move(source), false, true) {}

  // Split ranges leave through the reduction, which applies the epilogue once.
  std::optional<std::string> epilogue_unsupported(const KernelConfig& config,
                                                  const Problem& problem) const override {
    if (config.get_or("TMA_STORE", 0) != 0)
      return fmt::format(
          "TMA_STORE=1 sends alpha * acc to C by tensor stores: epilogue {} stores D directly "
          "(use TMA_STORE=0)",
          problem.epilogue.kind());
    return std::nullopt;
  }

  std::optional<std::string> config_unsupported(const KernelConfig& config, const Problem& problem,
                                                const std::string&) const override {
    if (split_k(config) < 1) return fmt::format("SPLIT_K={} is not at least 1", split_k(config));
    if (problem.m < 1 || problem.n < 1 || problem.k < 1)
      return fmt::format(
          "{} maps A and B as tensors: M, N and K must be at least 1 (have {}x{}x{})", name(),
          problem.m, problem.n, problem.k);
    // tf32 and FP8 operands stored MN-major are packed first, from any alignment.
    const bool direct_a = !packs_a(problem), direct_b = !packs_b(problem);
    if ((direct_a && problem.align_a % 16 != 0) || (direct_b && problem.align_b % 16 != 0))
      return fmt::format(
          "{} reads A and B with tensor copies, which need 16-byte aligned pointers and leading "
          "dimensions (have {} and {} bytes; the families that copy through registers serve "
          "the others)",
          name(), problem.align_a, problem.align_b);
    if ((packs_a(problem) || packs_b(problem)) && split_k(config) > 1)
      return fmt::format(
          "{} in layout {} packs its MN-major operands into the workspace, where split-K keeps "
          "its partial sums: SPLIT_K must be 1",
          problem.types.name(), problem.layout());
    if (packed_bytes(problem) > kMaxPackWorkspaceBytes)
      return fmt::format(
          "{} in layout {} packs its MN-major operands: {} MiB of workspace for "
          "{}x{}x{} (at most {} MiB)",
          problem.types.name(), problem.layout(), packed_bytes(problem) >> 20, problem.m, problem.n,
          problem.k, kMaxPackWorkspaceBytes >> 20);
    if (problem.types.fp8()) {
      const int64_t accumulators =
          config.get("BM") / config.get("CONSUMERS") / 64 * config.get("BN") / 2;
      if (accumulators > kFp8MaxAccumulators)
        return fmt::format(
            "FP8 keeps each slice's sum and the f32 sums apart (promotion): {} accumulators per "
            "thread, twice, spill (at most {}: a consumer's 64 x 192)",
            accumulators, kFp8MaxAccumulators);
    }
    if (split_k(config) > 1) return split_k_workspace_unsupported(problem, split_k(config));
    return std::nullopt;
  }

  // The reduction of the split partial sums is entry 1; tf32 and FP8 builds end with the pack
  // of MN-major operands.
  std::vector<std::string> entries(const KernelConfig& config,
                                   const GemmTypes& types) const override {
    std::vector<std::string> out = {name()};
    if (split_k(config) > 1) out.push_back(name() + "_reduce");
    if (reads_k_major_only(types)) out.push_back(name() + "_pack");
    return out;
  }

  LaunchPlan make_plan(const KernelConfig& config, const Problem& problem,
                       int sm_count) const override {
    LaunchPlan plan;
    const TileShape t = tile(config);
    const int64_t cluster_m = config.get_or("CLUSTER", 1),
                  cluster_n = config.get_or("CLUSTER_N", 1);
    const int64_t cluster = cluster_m * cluster_n;
    // A cluster's blocks take neighbouring tiles together: the units are cluster positions.
    const int64_t units = ceil_div(ceil_div(problem.m, t.m), cluster_m) *
                          ceil_div(ceil_div(problem.n, t.n), cluster_n) * t.split_k;
    // Persistent: one block per SM walks the units (every unit its own cluster where no GPU is
    // known, which computes the same).
    const int64_t clusters = sm_count > 0 ? std::min<int64_t>(units, sm_count / cluster) : units;
    const PackedLayout packed_a = packed_operand(problem, problem.m);
    const PackedLayout packed_b = packed_operand(problem, problem.n);
    if (packs_a(problem) || packs_b(problem)) {
      plan.add(pack_launch(problem, int(entries(config, problem.types).size()) - 1, packed_a.ld));
      plan.workspace_bytes = packed_bytes(problem);
    }
    KernelLaunch main;
    main.grid[0] = unsigned(clusters * cluster);
    main.persistent = true;
    main.cluster = unsigned(cluster);
    main.block[0] = unsigned(block_resources(config).threads);
    main.smem_bytes = block_resources(config).dynamic_smem_bytes;
    plan.add(main);
    // The blocks sharing a K-major operand each copy their share of its rows (MN-major ones:
    // whole boxes of 64 columns).
    plan.map_a = packs_a(problem) ? packed_map(problem, problem.m, packed_a, 0, t.m / cluster_n)
                                  : operand_map(problem, problem.op_a == Op::N, problem.m,
                                                problem.lda, t.m / cluster_n);
    plan.map_b =
        packs_b(problem)
            ? packed_map(problem, problem.n, packed_b, packed_a.bytes, t.n / cluster_m)
            : operand_map(problem, problem.op_b == Op::T, problem.n, problem.ldb, t.n / cluster_m);
    if (config.get_or("TMA_STORE", 0) == 1 && t.split_k == 1) plan.map_c = staged_c_map(problem);
    if (t.split_k > 1) add_split_k_reduce(&plan, problem, t.split_k, kReduceEntry, true);
    return plan;
  }

  BlockResources block_resources(const KernelConfig& config) const override {
    BlockResources r;
    r.threads = int((config.get("CONSUMERS") + 1) * 128);
    // The ring's slots, the alignment, and two staging chunks of C per consumer warpgroup.
    r.dynamic_smem_bytes = size_t(
        config.get("STAGES") * (config.get("BM") + config.get("BN")) * wgmma_family::kRowBytes +
        wgmma_family::kAlignSmem +
        config.get_or("TMA_STORE", 0) *
            (config.get("CONSUMERS") * 2 * kChunkRows * wgmma_family::kRowBytes));
    return r;
  }

 private:
  static constexpr int kReduceEntry = 1;
  static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

  // C as the kernel stores its staged chunks (TMA_STORE): boxes of 128 bytes of columns by 64
  // rows. The launch encodes it only for a call whose C is 16-byte aligned.
  static TensorMapView staged_c_map(const Problem& p) {
    const int e = element_bytes(p.types.c);
    TensorMapView v;
    v.dtype = p.types.c;
    v.row_bytes = p.ldc * e;
    v.inner = p.n;
    v.outer = p.m;
    v.box_inner = int(wgmma_family::kRowBytes / e);
    v.box_outer = int(kChunkRows);
    return v;
  }

  // tf32 and FP8 wgmmas read K-major operands only: A stored [k][m] (op T) or B stored [k][n]
  // (op N) is packed K-major into the workspace first (the pack entry, common/pack_layout.h).
  static bool reads_k_major_only(const GemmTypes& t) {
    return t.fp8() || t.compute == ComputeType::tf32;
  }
  static bool packs_a(const Problem& p) { return reads_k_major_only(p.types) && p.op_a == Op::T; }
  static bool packs_b(const Problem& p) { return reads_k_major_only(p.types) && p.op_b == Op::N; }
  // The pack entry's launch: a layer of tiles per operand (A's and B's packed rows are `ld`
  // elements long), FP8 in 64 x 64 bytes by 256 threads, tf32 in 32 x 32 elements by 32 x 8.
  static KernelLaunch pack_launch(const Problem& p, int entry, int64_t ld) {
    const bool fp8 = p.types.fp8();
    const int64_t tile = fp8 ? 64 : 32;
    KernelLaunch pack;
    pack.entry = entry;
    pack.grid[0] = unsigned(ceil_div(ld, tile));
    pack.grid[1] = unsigned(ceil_div(std::max(p.m, p.n), tile));
    pack.grid[2] = 2;
    pack.block[0] = fp8 ? 256 : 32;
    pack.block[1] = fp8 ? 1 : 8;
    return pack;
  }
  // An operand of `rows` rows packed K-major: rows of K elements padded to 16 bytes.
  static PackedLayout packed_operand(const Problem& p, int64_t rows) {
    const int e = element_bytes(p.types.a);
    return packed_layout(rows, p.k, 1, 16 / e, e);
  }

  // The workspace the packed operands take: A's rows first (its space kept when only B is
  // packed, as the pack entry places B after it), then B's.
  static size_t packed_bytes(const Problem& p) {
    if (!packs_a(p) && !packs_b(p)) return 0;
    const int64_t a = packed_operand(p, p.m).bytes;
    return size_t(a + (packs_b(p) ? packed_operand(p, p.n).bytes : 0));
  }

  // A packed operand in the workspace at `offset`: `rows` rows of K elements, `packed.ld`
  // apart, copied as a K-major operand is.
  static TensorMapView packed_map(const Problem& p, int64_t rows, const PackedLayout& packed,
                                  int64_t offset, int64_t tile_rows) {
    const int e = element_bytes(p.types.a);
    TensorMapView v;
    v.dtype = p.types.a;
    v.row_bytes = packed.ld * e;
    v.inner = p.k;
    v.outer = rows;
    v.box_inner = int(wgmma_family::kRowBytes / e);
    v.box_outer = int(tile_rows);
    v.workspace_offset = offset;
    return v;
  }

  // One operand as the kernel copies it: K-major (stored [rows][k]) in boxes of one 128-byte
  // row of K by the tile's rows; MN-major (stored [k][rows]) in boxes of 128 bytes of columns
  // (64 16-bit ones) by one slice's K.
  static TensorMapView operand_map(const Problem& p, bool k_major, int64_t rows, int64_t ld,
                                   int64_t tile_rows) {
    const int e = element_bytes(p.types.a);
    TensorMapView v;
    v.dtype = p.types.a;
    v.row_bytes = ld * e;
    v.inner = k_major ? p.k : rows;
    v.outer = k_major ? rows : p.k;
    v.box_inner = int(wgmma_family::kRowBytes / e);
    v.box_outer = int(k_major ? tile_rows : wgmma_family::kRowBytes / e);
    return v;
  }
};

}  // namespace

std::unique_ptr<GemmTemplate> make_gemm_tma_wgmma_template(KernelSource source) {
  return std::make_unique<GemmTmaWgmma>(std::move(source));
}

}  // namespace tgemm
