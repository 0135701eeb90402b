// What the host fixes for a problem, as the device sees it: the layout (TGEMM_OP_A/B) and
// the element types TGEMM_TYPE_{A,B,C} (0 f32, 1 f16, 2 bf16, 3 e4m3, 4 e5m2; FP8 for A and B
// only), which become ElementA/B/C, with conversions to and from the f32 accumulator, and the
// C = beta * C pass that split-K launches run first.
// The 16-bit types are our own bit containers converted with PTX: NVRTC has no built-in
// cuda_fp16.h, and a machine that runs libtgemm need not have the toolkit's headers.
#pragma once

#include "common/gemm_params.h"

// Fixed by the problem, not tuned: 0 = op(X) is X, 1 = op(X) is X^T (row-major storage).
#ifndef TGEMM_OP_A
#define TGEMM_OP_A 0
#endif
#ifndef TGEMM_OP_B
#define TGEMM_OP_B 0
#endif
#ifndef TGEMM_TYPE_A
#define TGEMM_TYPE_A 0
#endif
#ifndef TGEMM_TYPE_B
#define TGEMM_TYPE_B 0
#endif
#ifndef TGEMM_TYPE_C
#define TGEMM_TYPE_C 0
#endif
// How products accumulate: 0 f32 (FFMA accuracy), 1 tf32 (one TF32 pass), 2 f32x3 (3xTF32).
#ifndef TGEMM_COMPUTE
#define TGEMM_COMPUTE 0
#endif
// FP8 inputs: scaled per tensor (EpilogueParams::scale_a / scale_b) and computed by the FP8
// tensor-core instructions only.
#define TGEMM_FP8 (TGEMM_TYPE_A >= 3)

namespace tgemm {

// Storage of one f16 / bf16 element: the IEEE binary16 / bfloat16 bits.
struct Half {
  unsigned short bits;
};
struct BFloat16 {
  unsigned short bits;
};
// Storage of one FP8 element (OCP E4M3 / E5M2): the tensor cores read them as they are.
struct Fp8E4M3 {
  unsigned char bits;
};
struct Fp8E5M2 {
  unsigned char bits;
};

template <int Code>
struct ElementOf;
template <>
struct ElementOf<0> {
  using type = float;
};
template <>
struct ElementOf<1> {
  using type = Half;
};
template <>
struct ElementOf<2> {
  using type = BFloat16;
};
template <>
struct ElementOf<3> {
  using type = Fp8E4M3;
};
template <>
struct ElementOf<4> {
  using type = Fp8E5M2;
};

using ElementA = typename ElementOf<TGEMM_TYPE_A>::type;
using ElementB = typename ElementOf<TGEMM_TYPE_B>::type;
using ElementC = typename ElementOf<TGEMM_TYPE_C>::type;

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(Half x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
// bfloat16 is the top half of an f32: widening is exact.
__device__ __forceinline__ float to_f32(BFloat16 x) {
  return __uint_as_float((unsigned)x.bits << 16);
}

template <typename T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ Half from_f32<Half>(float x) {
  Half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
  return h;
}
// Round to nearest even; sm_75 has no bf16 convert instruction, so it is done on the bits.
template <>
__device__ __forceinline__ BFloat16 from_f32<BFloat16>(float x) {
  BFloat16 b;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.bits) : "f"(x));
#else
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = 0x7fc0;  // NaN stays a quiet NaN
  } else {
    b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
#endif
  return b;
}

// C = beta * C (zero when beta == 0), grid-stride: split-K slices then add into C.
template <typename T>
__device__ __forceinline__ void scale_c_by_beta(const GemmParams& p) {
  T* const c = static_cast<T*>(p.c);
  const long long total = (long long)p.m * p.n;
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    T* e = c + (idx / p.n) * p.ldc + idx % p.n;
    *e = p.beta == 0.0f ? from_f32<T>(0.0f) : from_f32<T>(p.beta * to_f32(*e));
  }
}

}  // namespace tgemm
