// GemmTemplate: the host side of one kernel template family, behind one small interface
// (CUTLASS's can_implement / run split). For a config it answers which problems it can
// compute and why not, its launches, its resources for static pruning, its description for
// the model and the selector, and its NVRTC defines. Nothing outside a family's own files
// names a family.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel_templates/common/pack_layout.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/jit/kernel_source.h"
#include "src/launch/launch_plan.h"
#include "src/templates/kernel_description.h"

namespace tgemm {

// What a block needs before anything is compiled (static pruning, shared-memory opt-in).
struct BlockResources {
  int threads = 0;
  size_t dynamic_smem_bytes = 0;
};

// One problem type a family computes and the archs that run it.
struct TypeRule {
  std::string types;     // a GemmTypes name: "f32", "tf32", "f16_out_f32", ...
  int lowest_arch;       // 75 for sm_75
  int highest_arch = 0;  // 0: every later arch too
};
// The types a family computes, stated once: types_unsupported answers from it, and the tuner
// offers the family only those problems.
struct FamilyTypes {
  std::vector<TypeRule> rules;
  std::string note;  // why the rules are what they are, for a refusal's message
};

class GemmTemplate {
 public:
  explicit GemmTemplate(KernelSource source) : source_(std::move(source)) {}
  virtual ~GemmTemplate() = default;
  GemmTemplate(const GemmTemplate&) = delete;
  GemmTemplate& operator=(const GemmTemplate&) = delete;

  const std::string& name() const { return source_.name; }
  const KernelSource& source() const { return source_; }

  // What the family computes, on which archs: a table the family keeps.
  virtual const FamilyTypes& computed_types() const = 0;
  // Why the family cannot compute these types on `arch` ("sm_75"), or nullopt: from
  // computed_types.
  std::optional<std::string> types_unsupported(const GemmTypes& types,
                                               const std::string& arch) const;
  // Why `config` can compute no problem of these types on `arch`, whatever its size or
  // alignment (f32x3's second accumulator set that does not fit), or nullopt: the tuner leaves
  // such configs out of a variant's space before compiling. unsupported_reason includes it.
  virtual std::optional<std::string> types_unsupported_by(const KernelConfig& config,
                                                          const GemmTypes& types,
                                                          const std::string& arch) const {
    (void)config, (void)types, (void)arch;
    return std::nullopt;
  }
  // Why `config` cannot compute `problem` on `arch` (types, alignment in bytes, a batch, an
  // epilogue), or nullopt: a config of another family, types it does not compute there,
  // config_unsupported, then, for a batch, batch_unsupported's (a grouped GEMM's:
  // grouped_unsupported's) and the plan's (one launch, no workspace, no state: the parts that
  // compute one member only), and, for an epilogue, epilogue_unsupported's.
  std::optional<std::string> unsupported_reason(const KernelConfig& config, const Problem& problem,
                                                const std::string& arch) const;
  // The kernels in a config's cubin built for `types`; launches refer to them by index, the
  // first is the main one (its resources are the ones pruned on).
  virtual std::vector<std::string> entries(const KernelConfig& config,
                                           const GemmTypes& types) const = 0;
  // The entries of the config's f32 build: those of every build where a family's entries do
  // not depend on the types (a family may add entries for some types, as a pack pre-pass).
  std::vector<std::string> entries(const KernelConfig& config) const {
    return entries(config, GemmTypes{});
  }
  // The launches that compute `problem`, in order; call only when unsupported_reason is nullopt.
  // `sm_count`: the GPU's multiprocessors, for a family that balances its last wave over them (a
  // stream tail, common/stream_tail.h); 0 where no GPU is known, which plans every tile whole.
  // A batch's main launch (entry 0) gets one grid layer per member (common/batch.cuh); a
  // grouped GEMM's plan also holds the tile each of a call's launches counts its blocks in
  // (LaunchPlan::group_tile_m/n), its grid then being the model's view of the call.
  LaunchPlan plan_launch(const KernelConfig& config, const Problem& problem,
                         int sm_count = 0) const;
  virtual BlockResources block_resources(const KernelConfig& config) const = 0;
  // What the model and the selector read of the config's build for `problem` (its tile, how
  // it copies and streams, its loops and registers): call only for a config whose parameters
  // the family's space accepts.
  virtual KernelDescription describe(const KernelConfig& config, const Problem& problem) const = 0;
  // The -D options a config is built with for a problem. They may depend only on the
  // problem's layout and types (one cubin serves every size): see build_variant(). By
  // default the problem's (problem_defines) then the config's parameters.
  virtual std::vector<std::string> defines(const KernelConfig& config,
                                           const Problem& problem) const;
  // The NVRTC target of a cubin that runs on `arch` ("sm_90"): the arch itself, or its
  // arch-specific variant ("sm_90a") for a family using instructions only that one has
  // (wgmma). The cubin is still stored, found and loaded as `arch`'s.
  virtual std::string nvrtc_arch(const std::string& arch) const { return arch; }

 protected:
  // unsupported_reason's work past the types, per family, for one member of a batch: what
  // this config cannot do with the problem's sizes, alignment and layout.
  virtual std::optional<std::string> config_unsupported(const KernelConfig& config,
                                                        const Problem& problem,
                                                        const std::string& arch) const = 0;
  // Why `config` cannot compute a batch (more than one member, or pointer arrays), or nullopt.
  // By default a family computes one GEMM per launch; one whose main kernel takes its member
  // from common/batch.cuh says nullopt, or what of its configs cannot.
  virtual std::optional<std::string> batch_unsupported(const KernelConfig& config,
                                                       const Problem& problem) const;
  // Why `config` cannot compute a grouped GEMM (Problem::groups), or nullopt. By default a
  // family has no grouped build; one whose main kernel takes its problem and tile from
  // common/batch.cuh's grouped form (TGEMM_BATCH=3) says nullopt, or what of its configs cannot.
  virtual std::optional<std::string> grouped_unsupported(const KernelConfig& config,
                                                         const Problem& problem) const;
  // Why `config` cannot apply the problem's epilogue (Problem::epilogue), or nullopt. By
  // default a family writes C without common/epilogue.cuh; one whose kernels store through it
  // says nullopt, or which of its configs cannot (atomic split-K has no last slice).
  virtual std::optional<std::string> epilogue_unsupported(const KernelConfig& config,
                                                          const Problem& problem) const;
  // computed_types of an FFMA family: f32 in and out with f32 accumulation, on every arch.
  static const FamilyTypes& ffma_f32();
  // plan_launch's work, per family, for one member of the batch.
  virtual LaunchPlan make_plan(const KernelConfig& config, const Problem& problem,
                               int sm_count) const = 0;

 private:
  KernelSource source_;
};

// The code of common/elements.cuh's TGEMM_TYPE_* macros for an element type: 0 f32, 1 f16,
// 2 bf16 (TGEMM_COMPUTE is ComputeType's value: 0 f32, 1 tf32, 2 f32x3).
int element_code(DType type);

// The part of a problem a cubin is built for: layout, types, batch form and epilogue build;
// sizes, batch size and alignment zeroed so that problems sharing a cubin share a variant.
Problem build_variant(const Problem& problem);
// The variant of a build of this batch form (build_variant of any problem of that form).
Problem build_variant(const GemmTypes& types, Op op_a, Op op_b, BatchForm form,
                      const Epilogue& epilogue);
// "-DTGEMM_OP_A=.. -DTGEMM_OP_B=.. -DTGEMM_TYPE_A/B/C=.." (and TGEMM_BATCH, the BatchForm, for
// a batch; Epilogue::defines for an epilogue) for a problem: the defines every template reads
// from common/elements.cuh, common/batch.cuh, common/epilogue.cuh and its layout macros.
std::vector<std::string> problem_defines(const Problem& problem);
// The launch of a family's C = beta * C pre-pass (common/elements.cuh's scale_c_by_beta),
// entry `entry`: split-K slices that add into C need it first.
KernelLaunch scale_c_launch(const Problem& problem, int entry);
// The description of a tiled family's config: its tile and copy width, nothing streamed, one
// loop for every layout.
KernelDescription tiled_description(const TileShape& tile, int copy_bytes = 16);
// The tile of a family whose parameters are named BM, BN, BK, SPLIT_K and MIN_BLOCKS.
TileShape tile_from_block_params(const KernelConfig& config);
// The main launch of a tiled family (entry 0): one block per t.m x t.n tile of C (x along N,
// y along M) and per split-K slice (z), `threads` each with `smem_bytes` of dynamic memory.
KernelLaunch tiled_launch(const TileShape& t, const Problem& problem, int threads,
                          size_t smem_bytes);

// The dynamic shared memory the main entry must opt in to before it runs `problem`'s variant:
// the most of block_resources and of the plan's main launches (a family whose stages depend
// on the types, e.g. two operand planes for f32x3, asks more in its plan than the config says).
size_t main_smem_opt_in(const GemmTemplate& family, const KernelConfig& config,
                        const Problem& problem);

// Deterministic split-K (common/split_k.cuh): the workspace `slices` f32 partial C's need.
size_t split_k_workspace_bytes(const Problem& problem, int64_t slices);
// The most workspace a family should ask for: past it, unsupported_reason refuses the config
// (deterministic split-K of a large C costs more memory than a split can win back).
constexpr size_t kMaxSplitKWorkspaceBytes = size_t(256) << 20;
// The most workspace an operand pack pre-pass may ask for (a packed A and B): past it the
// family refuses the config, as the copies would hold more memory than the caller's inputs.
constexpr size_t kMaxPackWorkspaceBytes = size_t(1) << 30;

// Why a config whose `split_k` K slices add atomically into C cannot apply the problem's
// epilogue (no slice is the last to see the whole sum; D is not C), or nullopt for split_k 1.
std::optional<std::string> atomic_split_k_epilogue_unsupported(const Problem& problem,
                                                               int64_t split_k);

// The launch of a pack pre-pass (common/pack_operand.cuh), entry `entry`, writing `packed`
// (elements of `element` bytes): one thread per 16 bytes, grid-stride past 65535 blocks, or,
// transposing, one 32 x 32 tile per block of 32 x 8 threads.
KernelLaunch pack_launch(const PackedLayout& packed, int element, bool transpose, int entry);
// Why `slices` partials of this problem's C do not fit kMaxSplitKWorkspaceBytes, or nullopt.
std::optional<std::string> split_k_workspace_unsupported(const Problem& problem, int64_t slices);
// Appends the reduction (entry `entry`, a kernel calling split_k_reduce with `slices`) after
// the launches that write the partials, and raises the plan's workspace to what they need.
// early: the reduction waits for the partials' grid itself (KernelLaunch::early).
void add_split_k_reduce(LaunchPlan* plan, const Problem& problem, int64_t slices, int entry,
                        bool early = false);

}  // namespace tgemm
