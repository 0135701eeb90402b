// The fused epilogue, as cuBLASLt's: D = act(alpha * op(A)op(B) + beta * C + bias), with the
// pre-activation values optionally kept in aux (for the backward pass, like GELU_AUX). Every
// family writes its output through store_output_pair here (or, for split-K, the reduction's
// split_k_reduce_output), after the last K slice: the activation runs once per element.
// What it computes is the build's (TGEMM_* below, src/core/epilogue.h's build_defines); where
// it reads and writes is the call's (EpilogueParams). A build without TGEMM_EPILOGUE declares
// nothing here but the empty parameter macro: its kernels are what they were before epilogues.
#pragma once

#include "common/c_pair.cuh"
#include "common/elements.cuh"
#include "common/epilogue_params.h"
#include "common/gemm_params.h"
#include "common/split_k.cuh"

// Fixed by the problem, not tuned. 1: the build applies an epilogue and takes EpilogueParams.
#ifndef TGEMM_EPILOGUE
#define TGEMM_EPILOGUE 0
#endif
// 0 none, 1 ReLU, 2 GELU (tanh approximation, cuBLASLt's GELU), 3 GELU (erf), 4 SiLU.
#ifndef TGEMM_ACTIVATION
#define TGEMM_ACTIVATION 0
#endif
// 0 no bias, 1 one value per column (along N: a Linear layer's bias), 2 one per row (along M).
#ifndef TGEMM_BIAS
#define TGEMM_BIAS 0
#endif
// The bias's element type (a TGEMM_TYPE_* code): C's, or f32.
#ifndef TGEMM_BIAS_TYPE
#define TGEMM_BIAS_TYPE TGEMM_TYPE_C
#endif
// 1: the pre-activation values are also written to EpilogueParams::aux.
#ifndef TGEMM_AUX
#define TGEMM_AUX 0
#endif

// The kernels' second parameter in an epilogue's build; nothing in a plain build.
#if TGEMM_EPILOGUE
#define TGEMM_EPILOGUE_PARAMETER , const tgemm::EpilogueParams epilogue
#else
#define TGEMM_EPILOGUE_PARAMETER
#endif

static_assert(TGEMM_ACTIVATION >= 0 && TGEMM_ACTIVATION <= 4, "TGEMM_ACTIVATION is 0..4");
static_assert(TGEMM_BIAS >= 0 && TGEMM_BIAS <= 2, "TGEMM_BIAS is 0, 1 (along N) or 2 (along M)");
// (Any bias into an f32 C: the reference pass applies a 16-bit C's bias to the f32 result.)
static_assert(TGEMM_BIAS_TYPE == TGEMM_TYPE_C || TGEMM_BIAS_TYPE == 0 || TGEMM_TYPE_C == 0,
              "the bias is in C's type or f32");
static_assert(TGEMM_EPILOGUE || (TGEMM_ACTIVATION == 0 && TGEMM_BIAS == 0 && TGEMM_AUX == 0),
              "an activation, a bias or aux needs an epilogue build (TGEMM_EPILOGUE=1)");

#if TGEMM_EPILOGUE
namespace tgemm {

using ElementBias = typename ElementOf<TGEMM_BIAS_TYPE>::type;

// The build's activation of a pre-activation value x.
__device__ __forceinline__ float activate(float x) {
#if TGEMM_ACTIVATION == 1
  return fmaxf(x, 0.0f);
#elif TGEMM_ACTIVATION == 2
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
#elif TGEMM_ACTIVATION == 3
  return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));  // 0.5 x (1 + erf(x / sqrt 2))
#elif TGEMM_ACTIVATION == 4
  return x / (1.0f + expf(-x));
#else
  return x;
#endif
}

// x + the bias of element (row, col), in f32.
__device__ __forceinline__ float add_bias(const EpilogueParams& e, int row, int col, float x) {
  if (TGEMM_BIAS == 0) return x;
  return x + to_f32(static_cast<const ElementBias*>(e.bias)[TGEMM_BIAS == 1 ? col : row]);
}

// Two neighbouring elements (row, col), (row, col + 1) of an m x n matrix at `base` (C's type,
// `ld` apart): one paired store where `aligned16` allows it (col is even), else one by one.
__device__ __forceinline__ void store_two_at(void* base, long long ld, int aligned16, int row,
                                             int col, bool both, float v0, float v1) {
  ElementC* const out = static_cast<ElementC*>(base) + (long long)row * ld + col;
  if (both && aligned16) return store_two(out, v0, v1, 0.0f);
  out[0] = from_f32<ElementC>(v0);
  if (both) out[1] = from_f32<ElementC>(v1);
}

// The value before the activation of element (row, col) whose accumulator is v:
// alpha * v + beta * C + bias.
__device__ __forceinline__ float pre_activation(const GemmParams& p, const EpilogueParams& e,
                                                int row, int col, float v) {
  float x = p.alpha * v;
  if (p.beta != 0.0f)
    x += p.beta * to_f32(static_cast<const ElementC*>(p.c)[(long long)row * p.ldc + col]);
  return add_bias(e, row, col, x);
}

// D(row, col) and D(row, col + 1) = act(alpha * (v0, v1) + beta * C + bias), within the matrix
// (col even); aux gets the values before the activation. The epilogue's store_c_pair.
__device__ __forceinline__ void store_output_pair(const GemmParams& p, const EpilogueParams& e,
                                                  int row, int col, float v0, float v1) {
  if (row >= p.m || col >= p.n) return;
  const bool both = col + 1 < p.n;
  const float x0 = pre_activation(p, e, row, col, v0);
  const float x1 = both ? pre_activation(p, e, row, col + 1, v1) : 0.0f;
  if (TGEMM_AUX) store_two_at(e.aux, e.ldaux, e.aux_aligned16, row, col, both, x0, x1);
  store_two_at(e.d, e.ldd, e.d_aligned16, row, col, both, activate(x0), activate(x1));
}

// D(row, col) alone, within the matrix: for a thread that owns single columns.
__device__ __forceinline__ void store_output(const GemmParams& p, const EpilogueParams& e, int row,
                                             int col, float v) {
  if (row >= p.m || col >= p.n) return;
  const float x = pre_activation(p, e, row, col, v);
  if (TGEMM_AUX) store_two_at(e.aux, e.ldaux, 0, row, col, false, x, 0.0f);
  store_two_at(e.d, e.ldd, 0, row, col, false, activate(x), 0.0f);
}

// Deterministic split-K's reduction with the epilogue (common/split_k.cuh's split_k_reduce):
// D = act(alpha * (the `slices` partials, in slice order) + beta * C + bias), aux alike.
__device__ __forceinline__ void split_k_reduce_output(const GemmParams& p, const EpilogueParams& e,
                                                      int slices) {
  split_k_sums(p, slices, [&](long long idx, float sum) {
    store_output(p, e, int(idx / p.n), int(idx % p.n), sum);
  });
}

}  // namespace tgemm
#endif
