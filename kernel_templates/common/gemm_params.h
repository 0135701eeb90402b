// The kernel parameter block of every GEMM template: one definition, included by the host
// (src/launch/launch_plan.h) and, through NVRTC's named headers, by the device code.
// Row-major storage: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
// The layout (72 bytes) is fixed: cubins stored in existing databases were built against it.
#pragma once

namespace tgemm {

struct GemmParams {
  const void* a;  // element type, layout and alignment are the problem's (the kernel's build)
  const void* b;
  void* c;
  long long lda, ldb, ldc;  // leading dimensions in elements
  int m, n, k;
  float alpha, beta;  // in the compute type's accumulator type: f32 for every compute type
  int c_aligned16;    // 1 when C's pointer and ldc allow 16-byte stores
};

}  // namespace tgemm
