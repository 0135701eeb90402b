#include "src/cuda/cublas_gemm.h"

#include <fmt/format.h>

#include <vector>

namespace tgemm {

cudaDataType_t cuda_data_type(DType type) {
  switch (type) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::e4m3:
      return CUDA_R_8F_E4M3;
    case DType::e5m2:
      return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

cublasComputeType_t cublas_compute_type(const GemmTypes& types, CublasMath math) {
  if (math == CublasMath::reference) return CUBLAS_COMPUTE_32F_PEDANTIC;
  return types.compute == ComputeType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return fmt::format("cuBLAS {}.{}.{}", major, minor, patch);
}

namespace {

cublasOperation_t cublas_op(Op op) { return op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N; }

// The batched forms of row_major_gemm: cublasGemmBatchedEx (pointer arrays) or
// cublasGemmStridedBatchedEx, SGEMM's own for plain f32 as in the single call.
cublasStatus_t row_major_gemm_batched(cublasHandle_t handle, const GemmCall& x,
                                      const GemmTypes& types, CublasMath math, DType c_type) {
  const cublasOperation_t op_b = cublas_op(x.op_b), op_a = cublas_op(x.op_a);
  const bool sgemm = types == GemmTypes{} && c_type == DType::f32 && math == CublasMath::matching;
  if (x.batch_pointers) {
    const auto* b = static_cast<const void* const*>(x.b);
    const auto* a = static_cast<const void* const*>(x.a);
    auto* c = static_cast<void* const*>(x.c);
    if (sgemm)
      return cublasSgemmBatched(handle, op_b, op_a, x.n, x.m, x.k, &x.alpha,
                                reinterpret_cast<const float* const*>(b), x.ldb,
                                reinterpret_cast<const float* const*>(a), x.lda, &x.beta,
                                reinterpret_cast<float* const*>(c), x.ldc, x.batch);
    return cublasGemmBatchedEx(handle, op_b, op_a, x.n, x.m, x.k, &x.alpha, b,
                               cuda_data_type(types.b), x.ldb, a, cuda_data_type(types.a), x.lda,
                               &x.beta, c, cuda_data_type(c_type), x.ldc, x.batch,
                               cublas_compute_type(types, math), CUBLAS_GEMM_DEFAULT);
  }
  if (sgemm)
    return cublasSgemmStridedBatched(handle, op_b, op_a, x.n, x.m, x.k, &x.alpha,
                                     static_cast<const float*>(x.b), x.ldb, x.stride_b,
                                     static_cast<const float*>(x.a), x.lda, x.stride_a, &x.beta,
                                     static_cast<float*>(x.c), x.ldc, x.stride_c, x.batch);
  return cublasGemmStridedBatchedEx(
      handle, op_b, op_a, x.n, x.m, x.k, &x.alpha, x.b, cuda_data_type(types.b), x.ldb, x.stride_b,
      x.a, cuda_data_type(types.a), x.lda, x.stride_a, &x.beta, x.c, cuda_data_type(c_type), x.ldc,
      x.stride_c, x.batch, cublas_compute_type(types, math), CUBLAS_GEMM_DEFAULT);
}

}  // namespace

cublasStatus_t row_major_gemm(cublasHandle_t handle, const GemmCall& x, CublasMath math) {
  return row_major_gemm(handle, x, math, x.types.c);
}

cublasStatus_t row_major_gemm(cublasHandle_t handle, const GemmCall& x, CublasMath math,
                              DType c_type) {
  GemmTypes types = x.types;
  if (types.compute == ComputeType::f32x3) types.compute = ComputeType::f32;
  if (x.batch != 1 || x.batch_pointers)
    return row_major_gemm_batched(handle, x, types, math, c_type);
  // Plain SGEMM for f32: the call every cuBLAS user makes, so ratios compare with that.
  if (types == GemmTypes{} && c_type == DType::f32 && math == CublasMath::matching)
    return cublasSgemm(handle, cublas_op(x.op_b), cublas_op(x.op_a), x.n, x.m, x.k, &x.alpha,
                       static_cast<const float*>(x.b), x.ldb, static_cast<const float*>(x.a), x.lda,
                       &x.beta, static_cast<float*>(x.c), x.ldc);
  return cublasGemmEx(handle, cublas_op(x.op_b), cublas_op(x.op_a), x.n, x.m, x.k, &x.alpha, x.b,
                      cuda_data_type(types.b), x.ldb, x.a, cuda_data_type(types.a), x.lda, &x.beta,
                      x.c, cuda_data_type(c_type), x.ldc, cublas_compute_type(types, math),
                      CUBLAS_GEMM_DEFAULT);
}

namespace {

// One cublasGemmBatchedEx per group with work (row_major_grouped_gemm's second way).
cublasStatus_t row_major_gemm_per_group(cublasHandle_t handle, const GroupedGemmCall& x,
                                        const GemmTypes& types) {
  int64_t first = 0;  // the group's first problem in the pointer arrays
  for (const CallGroup& g : x.groups) {
    if (g.m > 0 && g.n > 0 && g.size > 0) {
      const cublasStatus_t status = cublasGemmBatchedEx(
          handle, cublas_op(g.op_b), cublas_op(g.op_a), g.n, g.m, g.k, &g.alpha, x.b + first,
          cuda_data_type(types.b), g.ldb, x.a + first, cuda_data_type(types.a), g.lda, &g.beta,
          x.c + first, cuda_data_type(types.c), g.ldc, g.size,
          cublas_compute_type(types, CublasMath::matching), CUBLAS_GEMM_DEFAULT);
      if (status != CUBLAS_STATUS_SUCCESS) return status;
    }
    first += g.size;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t row_major_grouped_gemm(cublasHandle_t handle, const GroupedGemmCall& x) {
  GemmTypes types = x.types;
  if (types.compute == ComputeType::f32x3) types.compute = ComputeType::f32;
  // Column-major C^T = op(B)^T op(A)^T per group: B's arrays first, m and n swapped.
  const size_t count = x.groups.size();
  std::vector<cublasOperation_t> trans_b(count), trans_a(count);
  std::vector<int> n(count), m(count), k(count), ldb(count), lda(count), ldc(count), size(count);
  std::vector<float> alpha(count), beta(count);
  for (size_t i = 0; i < count; ++i) {
    const CallGroup& g = x.groups[i];
    trans_b[i] = cublas_op(g.op_b);
    trans_a[i] = cublas_op(g.op_a);
    n[i] = g.n;
    m[i] = g.m;
    k[i] = g.k;
    ldb[i] = g.ldb;
    lda[i] = g.lda;
    ldc[i] = g.ldc;
    size[i] = g.size;
    alpha[i] = g.alpha;
    beta[i] = g.beta;
  }
  const cublasStatus_t status = cublasGemmGroupedBatchedEx(
      handle, trans_b.data(), trans_a.data(), n.data(), m.data(), k.data(), alpha.data(), x.b,
      cuda_data_type(types.b), ldb.data(), x.a, cuda_data_type(types.a), lda.data(), beta.data(),
      x.c, cuda_data_type(types.c), ldc.data(), int(count), size.data(),
      cublas_compute_type(types, CublasMath::matching));
  if (status != CUBLAS_STATUS_NOT_SUPPORTED && status != CUBLAS_STATUS_INVALID_VALUE) return status;
  return row_major_gemm_per_group(handle, x, types);
}

cublasStatus_t row_major_dgemm(cublasHandle_t handle, const GemmCall& x) {
  const double alpha = x.alpha, beta = x.beta;
  if (x.batch > 1)
    return cublasDgemmStridedBatched(handle, cublas_op(x.op_b), cublas_op(x.op_a), x.n, x.m, x.k,
                                     &alpha, static_cast<const double*>(x.b), x.ldb, x.stride_b,
                                     static_cast<const double*>(x.a), x.lda, x.stride_a, &beta,
                                     static_cast<double*>(x.c), x.ldc, x.stride_c, x.batch);
  return cublasDgemm(handle, cublas_op(x.op_b), cublas_op(x.op_a), x.n, x.m, x.k, &alpha,
                     static_cast<const double*>(x.b), x.ldb, static_cast<const double*>(x.a), x.lda,
                     &beta, static_cast<double*>(x.c), x.ldc);
}

}  // namespace tgemm
