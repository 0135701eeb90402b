// GemmCall: the arguments of one GEMM call as the C and C++ APIs receive them, row-major, and
// as the one cuBLAS wrapper (src/cuda/cublas_gemm.h) takes them.
#pragma once

#include "src/core/dtype.h"
#include "src/core/epilogue.h"

namespace tgemm {

// alpha and beta are in the accumulator type (f32 for every compute type); the types come
// last, so that an f32 call reads as cuBLAS's SGEMM argument list.
struct GemmCall {
  Op op_a = Op::N, op_b = Op::N;
  int m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  const void* a = nullptr;
  int lda = 0;
  const void* b = nullptr;
  int ldb = 0;
  void* c = nullptr;
  int ldc = 0;
  GemmTypes types;
  // A batch of `batch` GEMMs of this shape (cuBLAS's batchCount; 0 computes nothing): member i
  // at a + i * stride_a, b + i * stride_b and c + i * stride_c (in elements), or, with
  // batch_pointers, a, b and c are device arrays of `batch` pointers (cuBLAS's gemmBatched).
  int batch = 1;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  bool batch_pointers = false;
  // A fused epilogue (cuBLASLt's): D = act(alpha op(A) op(B) + beta C + bias), aux = the values
  // before act. bias: m or n elements (Epilogue::bias, bias_f32); d null: D is C (ldd unread);
  // aux: m x n of C's type where the epilogue keeps it. A single GEMM only. The dispatcher reads
  // epilogue.separate_d from d (apart when neither null nor C).
  Epilogue epilogue{};
  const void* bias = nullptr;
  void* d = nullptr;
  int ldd = 0;
  void* aux = nullptr;
  int ldaux = 0;
  // FP8 inputs' per-tensor scales, each one f32 on the device (cuBLASLt's A and B scale
  // pointers; null is 1): the result is scale_a * scale_b * alpha * op(A) op(B) + beta * C.
  // Unread for other types.
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
};

}  // namespace tgemm
