// Batched GEMM on the grid: a family's main launch computes member z of the batch in its blocks
// of blockIdx.z, z from 0 to GemmParams::batch - 1. A family that cuts K into slices over z
// (SPLIT_K > 1) keeps z for them; its host side refuses a batch then (GemmTemplate::
// unsupported_reason), so z is the member only where K is whole.
#pragma once

#include "common/elements.cuh"
#include "common/gemm_params.h"

// Fixed by the problem, not tuned (src/core/batch_form.h): 0 one GEMM, 1 a strided batch, 2
// pointer arrays (a, b and c are device arrays of the members' pointers). A build of its own:
// a single GEMM's code is exactly what it was before batches, and pointers loaded from memory
// (not known to be global) cost the strided build nothing.
#ifndef TGEMM_BATCH
#define TGEMM_BATCH 0
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
