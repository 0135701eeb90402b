// Batched GEMM on the grid: a family's main launch computes member z of the batch in its blocks
// of blockIdx.z, z from 0 to GemmParams::batch - 1. A family that cuts K into slices over z
// (SPLIT_K > 1) keeps z for them; its host side refuses a batch then (GemmTemplate::
// unsupported_reason), so z is the member only where K is whole. A grouped launch (groups of
// problems of their own shapes) numbers every tile of every problem along x instead, and each
// block finds its problem in the launch's table (common/group_table.h).
#pragma once

#include "common/elements.cuh"
#include "common/gemm_params.h"
#include "common/group_table.h"
#include "common/tile_swizzle.cuh"

// Fixed by the problem, not tuned (src/core/batch_form.h): 0 one GEMM, 1 a strided batch, 2
// pointer arrays (a, b and c are device arrays of the members' pointers), 3 groups (pointer
// arrays and a table of the groups' shapes). A build of its own: a single GEMM's code is exactly
// what it was before batches, and pointers loaded from memory (not known to be global) cost the
// strided build nothing.
#ifndef TGEMM_BATCH
#define TGEMM_BATCH 0
#endif
#if TGEMM_BATCH == 3 && defined(TGEMM_EPILOGUE) && TGEMM_EPILOGUE
#error "a grouped build has no epilogue: the table takes the parameter space an epilogue's needs"
#endif

// The main kernel's first parameter: the block, or, grouped, the block and the groups' table.
// __grid_constant__: a block reads its group's entry where the table lies, by a computed index,
// and never copies the table (about 3 KiB) to local memory.
#if TGEMM_BATCH == 3
#define TGEMM_BATCH_PARAMETER const __grid_constant__ tgemm::GroupedGemmParams batched
#else
#define TGEMM_BATCH_PARAMETER const tgemm::GemmParams batched
#endif

namespace tgemm {

// The K slice a split-K block computes: blockIdx.z (0 for every block of a single GEMM's
// whole-K launch); 0 in a batch's build, whose z numbers the members.
template <int SplitK>
__device__ __forceinline__ int split_k_slice() {
  return SplitK == 1 && TGEMM_BATCH != 0 ? 0 : int(blockIdx.z);
}

// The K range [begin, end) of slice `slice` when K is cut into `slices` runs of whole BK-deep
// tiles (the last may be short, or empty): `tiles` tiles, the last one partial where K ends.
struct KSlice {
  int begin, end, tiles;
};
__device__ __forceinline__ KSlice k_slice(int k, int bk, int slices, int slice) {
  const int tiles_total = (k + bk - 1) / bk;
  const int tiles_per_slice = (tiles_total + slices - 1) / slices;
  KSlice s;
  s.begin = slice * tiles_per_slice * bk;
  s.end = min(k, s.begin + tiles_per_slice * bk);
  s.tiles = s.end > s.begin ? (s.end - s.begin + bk - 1) / bk : 0;
  return s;
}

// The member of the batch this block computes: blockIdx.z in a batch's build.
__device__ __forceinline__ int batch_member() { return TGEMM_BATCH == 0 ? 0 : int(blockIdx.z); }

#if TGEMM_BATCH != 3
// This block's tile of C (tile_m, tile_n) in a grid of one problem's tiles (x along N, y along
// M), swizzled; `p` is the block's parameters (batch_operands), read only by a grouped build.
__device__ __forceinline__ void batch_tile(const GemmParams& p, int swizzle, int* tile_m,
                                           int* tile_n) {
  (void)p;
  swizzled_tile(swizzle, tile_m, tile_n);
}
#endif

#if TGEMM_BATCH == 0
// A single GEMM's block reads the parameters as given (references: the code it had before).
template <int SplitK>
__device__ __forceinline__ const GemmParams& batch_operands(const GemmParams& p) {
  return p;
}
template <int SplitK>
__device__ __forceinline__ const GemmParams& batch_c(const GemmParams& p) {
  return p;
}
#elif TGEMM_BATCH == 3
// A grouped launch's block: its problem's parameters (a, b, sizes, ldc and scalars; c is still
// the array of C pointers until batch_c), its problem and its tile.
struct GroupedBlock : GemmParams {
  int problem;           // index into the call's pointer arrays
  int tile;              // the block's tile in its problem, row-major over tiles_m x tiles_n
  int tiles_m, tiles_n;  // the problem's tile grid
};

// The entry of the group that holds tile `t`: the last whose first tile is at most t (every
// entry holds a tile, so first tiles increase). A binary search: at most 6 steps for 64 groups.
__device__ __forceinline__ int group_of_tile(const GroupedGemmParams& p, int t) {
  int lo = 0, hi = p.groups - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (p.group[mid].first_tile <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// This block's problem (blockIdx.x is its tile in the launch), with a and b moved to it. One
// block per tile rather than a persistent loop over tiles: each block runs the family's main
// loop once, as a single GEMM's does, with no per-tile state to reset, and the hardware's
// block scheduler balances problems of unequal sizes as it does any grid.
template <int SplitK>
__device__ __forceinline__ GroupedBlock batch_operands(const GroupedGemmParams& p) {
  static_assert(SplitK == 1, "a grouped launch's blocks are its tiles: K stays whole");
  const int t = int(blockIdx.x);
  const GroupEntry& g = p.group[group_of_tile(p, t)];
  const int tiles = g.tiles_m * g.tiles_n, local = t - g.first_tile;
  GroupedBlock q;
  static_cast<GemmParams&>(q) = p.gemm;
  q.problem = g.first_problem + local / tiles;
  q.tile = local % tiles;
  q.tiles_m = g.tiles_m;
  q.tiles_n = g.tiles_n;
  q.a = static_cast<const void* const*>(p.gemm.a)[q.problem];
  q.b = static_cast<const void* const*>(p.gemm.b)[q.problem];
  q.m = g.m;
  q.n = g.n;
  q.k = g.k;
  q.ldc = g.ldc;
  q.alpha = g.alpha;
  q.beta = g.beta;
  return q;
}

// The block's C, read where C is written (as the pointer arrays' build does). The host never
// sees C's pointer: paired stores where this problem's pointer and ldc allow them.
template <int SplitK>
__device__ __forceinline__ GemmParams batch_c(const GroupedBlock& p) {
  GemmParams q = p;
  q.c = static_cast<void* const*>(p.c)[p.problem];
  const unsigned long long row_bytes = (unsigned long long)p.ldc * sizeof(ElementC);
  q.c_aligned16 = ((reinterpret_cast<unsigned long long>(q.c) | row_bytes) % 16) == 0;
  return q;
}

__device__ __forceinline__ void batch_tile(const GroupedBlock& p, int swizzle, int* tile_m,
                                           int* tile_n) {
  swizzled_tile_of(p.tile, p.tiles_m, p.tiles_n, swizzle, tile_m, tile_n);
}
#else
// `p` with a and b moved to this block's member of the batch (K stays whole: z is the member).
template <int SplitK>
__device__ __forceinline__ GemmParams batch_operands(const GemmParams& p) {
  static_assert(SplitK == 1, "a batch's members take z: K stays whole");
  GemmParams q = p;
#if TGEMM_BATCH == 1
  q.a = static_cast<const ElementA*>(p.a) + batch_member() * p.stride_a;
  q.b = static_cast<const ElementB*>(p.b) + batch_member() * p.stride_b;
#else
  q.a = static_cast<const void* const*>(p.a)[batch_member()];
  q.b = static_cast<const void* const*>(p.b)[batch_member()];
#endif
  return q;
}

// `p` with c moved to this block's member. Called where C is written, not at the start: C's
// pointer then takes no register through the main loop (where the larger configs have none).
template <int SplitK>
__device__ __forceinline__ GemmParams batch_c(const GemmParams& p) {
  GemmParams q = p;
#if TGEMM_BATCH == 1
  q.c = static_cast<ElementC*>(p.c) + batch_member() * p.stride_c;
#else
  q.c = static_cast<void* const*>(p.c)[batch_member()];
#endif
  return q;
}
#endif

}  // namespace tgemm
