// The one row-major cuBLAS GEMM of tgemm (cublasGemmEx by type): the evaluator's reference
// and its timing baseline, the dispatcher's last resort and tgemm-bench's contender.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "src/core/gemm_call.h"
#include "src/core/grouped_call.h"

namespace tgemm {

// Which cuBLAS math serves a GemmTypes: the matching cublasGemmEx call (f32 SGEMM-accurate,
// tf32 one TF32 pass, f16/bf16 f32 accumulation; f32x3 is compared with SGEMM), or the
// reference: pedantic f32 accumulation with no TF32 and no reduced-precision reductions.
enum class CublasMath { matching, reference };

// Row-major C = alpha op(A) op(B) + beta C as cuBLAS's column-major C^T = op(B)^T op(A)^T
// (operands swapped). `c_type` overrides the output type (a reference in f32 of a 16-bit C).
// An f32x3 call is computed as SGEMM, the FP32 accuracy it asks for. A batch (call.batch,
// strides or pointer arrays) is cuBLAS's strided-batched or pointer-array batched call.
cublasStatus_t row_major_gemm(cublasHandle_t handle, const GemmCall& call, CublasMath math);
cublasStatus_t row_major_gemm(cublasHandle_t handle, const GemmCall& call, CublasMath math,
                              DType c_type);

// A grouped call as cuBLAS's cublasGemmGroupedBatchedEx (operands swapped, as row_major_gemm
// does), in the matching math of its types; where cuBLAS's grouped call refuses them
// (CUBLAS_STATUS_NOT_SUPPORTED, or INVALID_VALUE for arguments the caller checked), one
// cublasGemmBatchedEx per group with work, on its part of the pointer arrays.
cublasStatus_t row_major_grouped_gemm(cublasHandle_t handle, const GroupedGemmCall& call);

// The cuBLAS names of an element type and of the compute type a call of these types uses
// (CublasMath::matching: f32x3 as SGEMM's FP32; reference: pedantic FP32).
cudaDataType_t cuda_data_type(DType type);
cublasComputeType_t cublas_compute_type(const GemmTypes& types, CublasMath math);

// "cuBLAS 13.0.2": the library version this process runs (no GPU needed), which a vendor call's
// recorded time depends on (vendor_call.h).
std::string cublas_version();

// Row-major C = alpha op(A) op(B) + beta C in FP64 (cublasDgemm): call.a, call.b and call.c
// point to doubles (call.types is ignored; a strided batch is cublasDgemmStridedBatched). The
// FP64 reference of f32x3 problems.
cublasStatus_t row_major_dgemm(cublasHandle_t handle, const GemmCall& call);

}  // namespace tgemm
