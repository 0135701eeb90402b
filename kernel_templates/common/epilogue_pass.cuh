// The epilogue as a launch of its own, over an output that already holds alpha * op(A) op(B) +
// beta * C (a cuBLAS GEMM's): where no kernel of ours serves a call, and for the evaluator's
// reference (in f32, TGEMM_TYPE_C=0, with the problem's bias type). The same functions as the
// fused epilogue (common/epilogue.cuh), so the two can never compute different things. Built
// with TGEMM_EPILOGUE=1 and the epilogue's defines (src/launch/epilogue_pass.h).
#pragma once

#include "common/epilogue.cuh"

#if TGEMM_EPILOGUE
// D(row, col) = act(D + bias) for every element of the m x n D (ldd apart), aux alike; `p`
// holds m and n (and alpha 1, beta 0: D's value is the GEMM's). Grid-stride, consecutive threads
// on consecutive columns.
extern "C" __global__ void epilogue_pass(const tgemm::GemmParams p, const tgemm::EpilogueParams e) {
  const long long total = (long long)p.m * p.n;
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    const int row = int(idx / p.n), col = int(idx % p.n);
    const float v = tgemm::to_f32(static_cast<const tgemm::ElementC*>(e.d)[row * e.ldd + col]);
    tgemm::store_output(p, e, row, col, v);
  }
}
#endif
