// The row-major GEMM through cuBLASLt with a chosen algorithm: the heuristic's top algorithms
// for a problem (the tuner times each, as PyTorch TunableOp does), and one of them rebuilt from
// its stored configuration (the dispatcher calls it where it was the problem's best).
#pragma once

#include <cublasLt.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/core/gemm_call.h"
#include "src/core/problem.h"
#include "src/core/vendor_call.h"

namespace tgemm {

// A cuBLASLt algorithm ready to run one problem, and the workspace it needs.
struct LtReadyAlgo {
  cublasLtMatmulAlgo_t algo;
  size_t workspace_bytes = 0;
};

// cuBLASLt's epilogue for ours, or nullopt where it has none: SiLU, erf GELU, a bias along M
// (a row of row-major C is a column of cuBLAS's), aux of a ReLU (cuBLASLt keeps a bit mask, not
// the values). A bias along N is cuBLASLt's bias (one value per row of its column-major D).
std::optional<cublasLtEpilogue_t> lt_epilogue(const Epilogue& epilogue);

// cuBLASLt refuses an FP8 call whose scale pointers are not 16-byte aligned (seen on H100,
// cuBLASLt 13: CUBLAS_STATUS_NOT_SUPPORTED from cublasLtMatmul); null pointers are scales of 1.
bool lt_scales_aligned(const GemmCall& call);

// The descriptors of one problem (shape, layout, types, alignment, epilogue): row-major C =
// op(A) op(B) as cuBLAS's column-major C^T = op(B)^T op(A)^T, the operands swapped as
// row_major_gemm does; D (ldd apart; C's ld by default) has C's type.
class LtGemm {
 public:
  // Throws Error naming the failed call when cuBLASLt refuses a descriptor, or the problem's
  // epilogue when cuBLASLt has none like it (lt_epilogue).
  LtGemm(cublasLtHandle_t handle, const Problem& problem, int64_t ldd = 0);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Up to `count` of the heuristic's algorithms for the problem's alignment that need at most
  // `max_workspace` bytes, its best first (empty when it has none).
  std::vector<LtAlgoConfig> heuristic(int count, size_t max_workspace) const;
  // The stored algorithm rebuilt and checked for the problem (cublasLtMatmulAlgoCheck);
  // nullopt, with `why`, when this cuBLASLt no longer accepts it.
  std::optional<LtReadyAlgo> ready(const LtAlgoConfig& config, std::string* why) const;
  // The call, of the problem's shape and types, with a ready algorithm on `stream`: D is the
  // call's (C where it gives none), and the epilogue's bias and aux pointers are set for it.
  cublasStatus_t run(const LtReadyAlgo& algo, const GemmCall& call, void* workspace,
                     cudaStream_t stream) const;

 private:
  void release();  // the descriptors made so far

  cublasLtHandle_t handle_;
  cublasComputeType_t compute_;
  cudaDataType_t a_type_, b_type_, c_type_;  // cuBLAS's A (our B), B (our A), C and D
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;  // cuBLAS's A (our B), B, C
  cublasLtMatrixLayout_t d_ = nullptr;
  int align_a_, align_b_, align_c_;  // bytes, cuBLAS's operands
  int align_d_;  // C's, or one element for a D apart (its pointer is the call's)
  bool bias_ = false, aux_ = false;  // run() sets their pointers on desc_ ...
  bool scales_ = false;              // (FP8's scales too)
  mutable std::mutex desc_mutex_;    // ... so calls sharing the descriptor take turns
};

}  // namespace tgemm
