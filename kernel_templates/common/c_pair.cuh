// Two neighbouring elements of C in one aligned store, out = r + beta * out: the tensor-core
// families' epilogue writes C in pairs (an mma or wgmma fragment holds two adjacent columns).
// Split-K adds its pairs into an f32 C instead (add_c_pair), after the C = beta * C pre-pass.
#pragma once

#include "common/elements.cuh"
#include "common/gemm_params.h"

__device__ __forceinline__ void store_two(float* out, float r0, float r1, float beta) {
  float2* const dst = reinterpret_cast<float2*>(out);
  if (beta != 0.0f) {
    const float2 old = *dst;
    r0 += beta * old.x;
    r1 += beta * old.y;
  }
  *dst = make_float2(r0, r1);
}
template <typename T>  // Half or BFloat16: two elements in one 32-bit word, low one first
__device__ __forceinline__ void store_two(T* out, float r0, float r1, float beta) {
  unsigned* const dst = reinterpret_cast<unsigned*>(out);
  if (beta != 0.0f) {
    const unsigned old = *dst;
    r0 += beta * tgemm::to_f32(T{(unsigned short)(old & 0xffffu)});
    r1 += beta * tgemm::to_f32(T{(unsigned short)(old >> 16)});
  }
  *dst = unsigned(tgemm::from_f32<T>(r0).bits) | (unsigned(tgemm::from_f32<T>(r1).bits) << 16);
}

// C(row, col) and C(row, col + 1) = alpha * (v0, v1) + beta * C, within the matrix: one paired
// store where C allows it (col is even, so the pair is aligned to two elements), else one by one.
__device__ __forceinline__ void store_c_pair(const tgemm::GemmParams& p, int row, int col, float v0,
                                             float v1) {
  using tgemm::ElementC;
  if (row >= p.m || col >= p.n) return;
  ElementC* const out = static_cast<ElementC*>(p.c) + (long long)row * p.ldc + col;
  float r0 = p.alpha * v0, r1 = p.alpha * v1;
  const bool both = col + 1 < p.n;
  if (both && p.c_aligned16) {
    store_two(out, r0, r1, p.beta);
    return;
  }
  if (p.beta != 0.0f) r0 += p.beta * tgemm::to_f32(out[0]);
  out[0] = tgemm::from_f32<ElementC>(r0);
  if (both) {
    if (p.beta != 0.0f) r1 += p.beta * tgemm::to_f32(out[1]);
    out[1] = tgemm::from_f32<ElementC>(r1);
  }
}

// Split-K: C(row, col) and C(row, col + 1) += alpha * (v0, v1), within the matrix, with f32
// atomics (red.global.add.f32: the sum is not read back) into the C the beta pre-pass scaled.
// C must be f32; the families refuse split-K into a 16-bit C.
__device__ __forceinline__ void add_c_pair(const tgemm::GemmParams& p, int row, int col, float v0,
                                           float v1) {
  if (row >= p.m || col >= p.n) return;
  float* const out = static_cast<float*>(p.c) + (long long)row * p.ldc + col;
  atomicAdd(out, p.alpha * v0);
  if (col + 1 < p.n) atomicAdd(out + 1, p.alpha * v1);
}
