// Deterministic split-K shared by the templates: each K slice writes its raw f32 partial sums
// to workspace[slice][m][n] (no atomics), and a second launch sums the slices in slice order
// and applies alpha and beta * C, so every run rounds alike (bitwise repeatable results).
// The host side (workspace size, the reduce launch) is src/templates/gemm_template.h's
// split_k_workspace_bytes and add_split_k_reduce.
#pragma once

#include "common/elements.cuh"
#include "common/gemm_params.h"

namespace tgemm {

// Both functions are templates on the parameter block so that a kernel which never uses
// them still compiles against an older GemmParams without `workspace` (old cubins' builds).

// Slice `slice`'s partial sum (alpha not applied) of C[row][col].
template <typename Params>
__device__ __forceinline__ void split_k_store_partial(const Params& p, int slice, int row, int col,
                                                      float partial) {
  float* const ws = static_cast<float*>(p.workspace);
  ws[((long long)slice * p.m + row) * p.n + col] = partial;
}

// Calls out(idx, sum) for each element idx (row-major, idx = row * n + col) of C with the sum of
// its `slices` partials in slice order; grid-stride over C, consecutive threads on consecutive
// columns (coalesced). The reductions (split_k_reduce, and the epilogue's in common/epilogue.cuh)
// differ only in what they write.
template <typename Params, typename Out>
__device__ __forceinline__ void split_k_sums(const Params& p, int slices, Out out) {
  const float* const ws = static_cast<const float*>(p.workspace);
  const long long total = (long long)p.m * p.n;
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    float sum = 0.0f;
    for (int z = 0; z < slices; ++z) sum += ws[z * total + idx];
    out(idx, sum);
  }
}

// C = alpha * (sum of the `slices` partials, in slice order) + beta * C, in C's type T.
template <typename T, typename Params>
__device__ __forceinline__ void split_k_reduce(const Params& p, int slices) {
  T* const c = static_cast<T*>(p.c);
  split_k_sums(p, slices, [&](long long idx, float sum) {
    T* const e = c + (idx / p.n) * p.ldc + idx % p.n;
    const float old = p.beta != 0.0f ? p.beta * to_f32(*e) : 0.0f;
    *e = from_f32<T>(p.alpha * sum + old);
  });
}

}  // namespace tgemm
