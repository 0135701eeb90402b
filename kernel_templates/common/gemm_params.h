// The kernel parameter block of every GEMM template: one definition, included by the host
// (src/launch/launch_plan.h) and, through NVRTC's named headers, by the device code.
// Row-major storage: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
// The layout is append-only: cubins stored in existing databases declare the first 72 bytes
// (up to c_aligned16) and the driver copies only the parameter size a kernel declares, so they
// keep working when fields are added at the end. Never reorder or resize a field. The block
// stays within 128 bytes: TmaGemmParams (common/tma_params.h) places its tensor maps at 128.
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
  void* workspace;    // offset 72: scratch of LaunchPlan::workspace_bytes (split-K partials)
  // Offset 80, for batched GEMM (common/batch.cuh): member i of the batch is A + i * stride_a,
  // B + i * stride_b and C + i * stride_c (strides in elements), or, in a build for pointer
  // arrays (TGEMM_BATCH=2), a, b and c point to device arrays of `batch` pointers. Only a
  // batch's builds declare it: a single GEMM's kernels keep the 80-byte block (and machine
  // code) they had, and the host always passes the whole block.
#if !defined(__CUDACC__) || (defined(TGEMM_BATCH) && TGEMM_BATCH != 0)
  long long stride_a, stride_b, stride_c;
  int batch;  // members, >= 1
#endif
};

}  // namespace tgemm
