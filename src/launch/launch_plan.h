// LaunchPlan: the kernel launches that compute one problem with one config (a main kernel,
// plus e.g. a C-scaling pre-pass or a split-K reduction), and the parameter block they share.
// Templates make plans (src/templates/); GemmKernel launches them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernel_templates/common/epilogue_params.h"
#include "kernel_templates/common/gemm_params.h"
#include "kernel_templates/common/tma_params.h"
#include "src/core/gemm_call.h"
#include "src/core/problem.h"

namespace tgemm {

// Append-only (see the header): 72 bytes up to c_aligned16 for old cubins, then the workspace,
// then the batch; within 128 bytes, where TmaGemmParams's maps begin.
static_assert(offsetof(GemmParams, c_aligned16) == 68 && offsetof(GemmParams, workspace) == 72 &&
                  offsetof(GemmParams, stride_a) == 80 && sizeof(GemmParams) == 112,
              "the parameter block's layout is append-only (see the header)");
static_assert(offsetof(TmaGemmParams, a) == 128,
              "TMA cubins stored before the batch fields read their maps at offset 128");
static_assert(offsetof(TmaGemmParams, epilogue) > offsetof(TmaGemmParams, c_by_copy) &&
                  sizeof(EpilogueParams) == 64,
              "the epilogue follows every field stored TMA cubins read");

struct KernelLaunch {
  int entry = 0;  // index into the template's entries() for the config
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t smem_bytes = 0;  // dynamic shared memory
  // May start before the launch before it in the plan ends (programmatic dependent launch,
  // sm_90+): its kernel calls wait_for_prior_grid (common/grid_dependency.cuh) before it
  // touches what that launch writes. Never the plan's first launch: that one follows the
  // caller's work.
  bool early = false;
  // The kernel walks its work units by gridDim.x (a persistent grid, entry 0 only): the launch
  // cuts grid[0] to the blocks, in whole clusters, that the GPU holds at once, since a block
  // that waits for a free SM would run its units after all the others.
  bool persistent = false;
  // Blocks per thread block cluster along x, as the kernel declares it (__cluster_dims__): the
  // launch counts resident blocks in whole clusters.
  unsigned cluster = 1;
};

// How a family reads one operand with the bulk tensor copy engine (TMA): the stored matrix as a
// 2-D tensor (inner dimension contiguous) and the box one copy moves. The launch encodes the
// map for the call's pointer, or the workspace's (GemmKernel::launch); none of it depends on the
// pointer.
struct TensorMapView {
  DType dtype = DType::f32;
  int64_t inner = 0, outer = 0;      // extents in elements; 0: the plan reads no tensor maps
  int64_t row_bytes = 0;             // bytes between consecutive outer rows (the leading dimension)
  int box_inner = 0, box_outer = 0;  // elements; the inner box is 128 bytes, 128-byte swizzled
  // Where the tensor lies: the call's operand (-1), or the workspace at this byte offset (an
  // operand a first launch of the plan packed there).
  int64_t workspace_offset = -1;
  bool operator==(const TensorMapView&) const = default;
};

// A fixed-size list, so that copying a plan (the dispatcher's cached calls) allocates nothing.
struct LaunchPlan {
  static constexpr int kMaxLaunches = 4;
  std::array<KernelLaunch, kMaxLaunches> launches{};
  int count = 0;
  size_t workspace_bytes = 0;  // device scratch the launches need (GemmParams::workspace)
  // The launches keep per-call state in the loaded module (e.g. arrival counters), so calls of
  // one loaded kernel must run one after another, as calls sharing a workspace must.
  bool module_state = false;
  // Set for families whose kernels take TmaGemmParams (common/tma_params.h): the maps of A and
  // B (and of C, for a kernel that stores C by tensor copies) follow the common block in every
  // launch's parameters.
  TensorMapView map_a, map_b, map_c;
  // A grouped GEMM's plan (GemmTemplate::plan_launch): the tile of C one block of the main launch
  // computes, which each call's tables count their tiles in (GroupedLaunches); 0 otherwise.
  int group_tile_m = 0, group_tile_n = 0;
  bool uses_tensor_maps() const { return map_a.inner > 0; }
  bool stores_by_tensor_map() const { return map_c.inner > 0; }

  void add(const KernelLaunch& launch);  // throws Error past kMaxLaunches
  const KernelLaunch* begin() const { return launches.data(); }
  const KernelLaunch* end() const { return launches.data() + count; }
};

// The parameter block for `problem` on these buffers (no workspace: GemmKernel::launch sets it).
GemmParams make_params(const Problem& problem, const void* a, const void* b, void* c, float alpha,
                       float beta);
// The epilogue's parameters of a call (D is C where the call gives none); what an epilogue's
// build reads beside the block, and nothing a plain build reads.
EpilogueParams make_epilogue_params(const GemmCall& call);

}  // namespace tgemm
