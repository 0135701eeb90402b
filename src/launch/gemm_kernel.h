// GemmKernel: one compiled config loaded on the GPU and ready to launch for problems it supports.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "src/core/kernel_config.h"
#include "src/cuda/cuda_library.h"
#include "src/launch/launch_plan.h"

namespace tgemm {

class GemmKernel {
 public:
  // Loads the cubin (throws Error when it cannot) and raises the kernel's dynamic
  // shared-memory limit on the current device.
  GemmKernel(const KernelConfig& config, const std::vector<char>& cubin, const std::string& entry);

  const KernelConfig& config() const { return config_; }
  // Enqueues the GEMM on `stream`; returns the launch's status, never throws.
  cudaError_t launch(const LaunchPlan& plan, const GemmParams& params, cudaStream_t stream) const;

 private:
  KernelConfig config_;
  std::unique_ptr<CudaLibrary> library_;
  cudaKernel_t main_ = nullptr;
  cudaKernel_t prepare_c_ = nullptr;
};

}  // namespace tgemm
