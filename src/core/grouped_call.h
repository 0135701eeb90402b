// GroupedGemmCall: the arguments of one grouped GEMM call (cuBLAS's cublasGemmGroupedBatchedEx),
// row-major, as the C and C++ APIs receive them and as the dispatcher, the launch tables
// (src/launch/grouped_launches.h) and the cuBLAS wrapper (src/cuda/cublas_gemm.h) read them.
#pragma once

#include <vector>

#include "src/core/dtype.h"

namespace tgemm {

// One group: `size` problems C = alpha op(A) op(B) + beta C of one shape, layout, leading
// dimensions (elements) and scalars (cuBLAS's per-group arrays at index g).
struct CallGroup {
  Op op_a = Op::N, op_b = Op::N;
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  int lda = 0, ldb = 0, ldc = 0;
  int size = 0;  // cuBLAS's group_size[g]
};

// The groups in order, one type triple and compute type for all, and device arrays holding one
// device pointer per problem: group 0's problems first, then group 1's, and so on (cuBLAS's
// Aarray, Barray and Carray).
struct GroupedGemmCall {
  GemmTypes types;
  std::vector<CallGroup> groups;
  const void* const* a = nullptr;
  const void* const* b = nullptr;
  void* const* c = nullptr;
};

}  // namespace tgemm
