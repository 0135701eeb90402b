// EpiloguePass: the epilogue as a launch of its own (kernel_templates/common/epilogue_pass.cuh)
// over an output a GEMM already wrote (alpha op(A) op(B) + beta C): the dispatcher's fallback
// for an epilogue cuBLASLt lacks, and the evaluator's reference. Compiled with NVRTC on first
// use, as a family's kernels are.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel_templates/common/epilogue_params.h"
#include "src/core/epilogue.h"
#include "src/cuda/cuda_library.h"

namespace tgemm {

class EpiloguePass {
 public:
  // The pass of `epilogue` (its math; D's place is the launch's) for an output of type `out`
  // with the bias in `bias` (C's type or f32), compiled for `arch` ("sm_80") and loaded on the
  // current device. Throws Error (with NVRTC's log) when it cannot.
  EpiloguePass(const Epilogue& epilogue, DType out, DType bias, const std::string& arch);
  // The NVRTC defines of that build.
  static std::vector<std::string> defines(const Epilogue& epilogue, DType out, DType bias);
  // D = act(D + bias) (aux = D + bias) over the m x n output at e.d, on `stream`; never throws.
  cudaError_t launch(int64_t m, int64_t n, const EpilogueParams& e, cudaStream_t stream) const;

 private:
  std::unique_ptr<CudaLibrary> library_;
  cudaKernel_t kernel_ = nullptr;
};

}  // namespace tgemm
