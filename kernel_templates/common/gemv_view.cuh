// The GEMV families' view of a problem from its small side (Side 0: m is small, C is S x L with
// S = m; Side 1: n is small, S = n): X(k, l) is the long operand and W(s, k) the small one, each
// with its stride. Side is the families' tunable SIDE.
#pragma once

#include "common/gemm_params.h"

namespace tgemm {

struct GemvView {
  const float* x;
  const float* w;
  long long ldx, ldw;
  int s, l, k;
};

template <int Side>
__device__ __forceinline__ GemvView make_gemv_view(const GemmParams& p) {
  GemvView v;
  v.x = static_cast<const float*>(Side == 0 ? p.b : p.a);
  v.w = static_cast<const float*>(Side == 0 ? p.a : p.b);
  v.ldx = Side == 0 ? p.ldb : p.lda;
  v.ldw = Side == 0 ? p.lda : p.ldb;
  v.s = Side == 0 ? p.m : p.n;
  v.l = Side == 0 ? p.n : p.m;
  v.k = p.k;
  return v;
}

}  // namespace tgemm
