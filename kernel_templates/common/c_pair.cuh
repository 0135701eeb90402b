// Two neighbouring elements of C in one aligned store, out = r + beta * out: the tensor-core
// families' epilogue writes C in pairs (an mma or wgmma fragment holds two adjacent columns).
#pragma once

#include "common/elements.cuh"

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
