// A fused epilogue's problem as tgemm-bench measures it (D is C): the epilogue's inputs (a
// random bias, the aux buffer where the epilogue keeps one), its reference (the epilogue's pass
// applied to cuBLAS's pedantic f32 result) and the two calls an application has without tgemm:
// cuBLASLt's fused call (its heuristic's first algorithm, where cuBLASLt has the epilogue) and
// cuBLAS's GEMM followed by the epilogue as a kernel of its own.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <random>
#include <string>

#include "src/core/gemm_call.h"
#include "src/core/problem.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/cuda/device_buffer.h"
#include "src/templates/epilogue_pass.h"
#include "tuner/evaluate/interleaved_timer.h"

namespace tgemm {

class EpiloguePeers {
 public:
  // The buffers of `problem`'s epilogue and its passes, compiled for `arch` (NVRTC); throws
  // Error when a pass cannot be built.
  EpiloguePeers(const Problem& problem, const std::string& arch, std::mt19937_64& rng);

  // `call` with the epilogue and its bias and aux buffers (D is C).
  void attach(GemmCall* call) const;
  // The epilogue applied in place to `ref`: the problem's m x n f32 result, ldc apart.
  std::string apply_reference(void* ref, cudaStream_t stream) const;
  // cuBLASLt's fused call of `call` (attached), or nullopt with `why` where cuBLASLt has no
  // such epilogue or no algorithm for the problem.
  std::optional<Launcher> fused(cublasLtHandle_t lt, const GemmCall& call, cudaStream_t stream,
                                std::string* why);
  // `gemm` (cuBLAS's call, writing C) followed by the epilogue's pass on C.
  Launcher unfused(Launcher gemm, const GemmCall& call, cudaStream_t stream) const;

 private:
  Problem problem_;
  DType bias_type_;
  DeviceBuffer bias_, aux_, aux_ref_;
  std::unique_ptr<EpiloguePass> pass_, reference_;
  std::unique_ptr<LtGemm> lt_;
  LtReadyAlgo algo_{};
  DeviceBuffer lt_workspace_;
};

}  // namespace tgemm
