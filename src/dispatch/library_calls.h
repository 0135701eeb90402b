// LibraryCalls: one device's calls of the vendor libraries, as the dispatcher makes them. cuBLAS's
// GEMM serves what no kernel of ours does; a tuned vendor best (cuBLAS, or cuBLASLt with its
// stored algorithm) serves its problem; what cuBLAS's GEMM alone cannot compute (a fused
// epilogue, FP8 inputs) takes cuBLASLt's call, or, for an epilogue cuBLASLt lacks, cuBLAS then
// our epilogue pass (src/templates/epilogue_pass.h). Handles, descriptors and algorithms are made
// once and kept; a call on a capturing stream that would have to make one is NotPreparedError.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "src/core/gemm_call.h"
#include "src/core/grouped_call.h"
#include "src/core/problem.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/dispatch/kernel_selector.h"
#include "src/dispatch/shared_workspace.h"
#include "src/templates/epilogue_pass.h"

namespace tgemm {

// A vendor best ready to call: cuBLAS (no descriptors), or cuBLASLt's stored algorithm rebuilt
// for the problem's shape, types, layout and alignment.
struct VendorCall {
  KernelConfig config;
  Problem problem;             // the call it was built for (its leading dimensions)
  std::unique_ptr<LtGemm> lt;  // null for cuBLAS
  LtReadyAlgo algo{};
};

class LibraryCalls {
 public:
  // `arch`: the device's, for the epilogue pass; `workspace`: the device's, which cuBLASLt's
  // algorithms that need one reserve in turn with the kernels.
  LibraryCalls(std::string arch, SharedWorkspace& workspace)
      : arch_(std::move(arch)), workspace_(workspace) {}
  ~LibraryCalls();
  LibraryCalls(const LibraryCalls&) = delete;
  LibraryCalls& operator=(const LibraryCalls&) = delete;

  // The vendor best `choice` names, built for `problem` once; throws where this library cannot
  // take it (another cuBLASLt, parameters that are no algorithm).
  const VendorCall* vendor_call(const KernelChoice& choice, const Problem& problem);
  // A tuned vendor best, served whatever the cuBLAS fallback setting says; cuBLASLt's refusal
  // (or its workspace's) turns to gemm().
  void run_vendor_call(const VendorCall& vendor, const Problem& problem, const GemmCall& call,
                       cudaStream_t stream);
  // `call` by the libraries: cuBLAS's GEMM, or what an epilogue or FP8 needs (see above).
  void gemm(const Problem& problem, const GemmCall& call, cudaStream_t stream);
  // cuBLAS's grouped GEMM (cublasGemmGroupedBatchedEx).
  void grouped(const GroupedGemmCall& call, cudaStream_t stream);
  // What gemm() of `problem` needs made ahead of a capture: the cuBLAS handle, and cuBLASLt's
  // call (its workspace held) where the problem needs one; `ldd`, `ldaux` as the calls' will be.
  void prepare(const Problem& problem, int64_t ldd, int64_t ldaux);

 private:
  // The fallback of a problem cuBLAS's GEMM alone cannot compute (run_epilogue_fallback): an
  // epilogue's or FP8's. cuBLASLt's call with the epilogue (and FP8's scales), or, where it has
  // none, our pass after cuBLAS (not for FP8, which cuBLAS has no GEMM for).
  struct EpilogueFallback {
    std::unique_ptr<LtGemm> lt;  // null: cuBLAS and the pass
    LtReadyAlgo algo{};
    std::unique_ptr<EpiloguePass> pass;  // null: cuBLASLt
  };

  // The caller holds cublas_mutex_. A capturing `capture_check` cannot create it.
  cublasHandle_t cublas_handle(std::optional<cudaStream_t> capture_check);
  void run_cublas(const GemmCall& call, cudaStream_t stream);
  const EpilogueFallback& epilogue_fallback(const Problem& problem, int64_t ldd, int64_t ldaux,
                                            std::optional<cudaStream_t> capture_check);
  void run_epilogue_fallback(const Problem& problem, const GemmCall& call, cudaStream_t stream);
  // cuBLASLt's call of `algo` on `stream`, with the workspace it needs reserved in turn as a
  // kernel's is (`what` names it in errors). Its status; *reserve_error is set, and nothing
  // runs, where the workspace could not be had.
  cublasStatus_t run_lt(const LtGemm& lt, const LtReadyAlgo& algo, const GemmCall& call,
                        cudaStream_t stream, const std::string& what, cudaError_t* reserve_error);

  const std::string arch_;
  SharedWorkspace& workspace_;
  std::mutex calls_mutex_;  // guards the maps below and the cuBLASLt handle's creation
  std::map<std::string, std::unique_ptr<VendorCall>> vendor_calls_;     // by problem and call
  std::map<std::string, std::unique_ptr<EpilogueFallback>> fallbacks_;  // by problem and ld
  cublasLtHandle_t lt_handle_ = nullptr;  // made with the first cuBLASLt call
  std::mutex cublas_mutex_;  // a cuBLAS handle's stream is per handle, so calls take turns
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace tgemm
