#include "src/launch/gemm_kernel.h"

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"

namespace tgemm {

GemmKernel::GemmKernel(const KernelConfig& config, const std::vector<char>& cubin,
                       const std::vector<std::string>& entries, size_t main_smem_bytes)
    : config_(config), library_(std::make_unique<CudaLibrary>(cubin)) {
  if (entries.empty()) fail("{}: a kernel needs at least one entry", config.canonical_name());
  for (const std::string& entry : entries) entries_.push_back(library_->kernel(entry));
  // Above 48 KiB a block gets dynamic shared memory only after opting in.
  TGEMM_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(entries_.front()),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(main_smem_bytes)));
}

cudaError_t GemmKernel::launch(const LaunchPlan& plan, GemmParams params, void* workspace,
                               cudaStream_t stream) const {
  params.workspace = workspace;
  return launch(plan, params, stream);
}

cudaError_t GemmKernel::launch(const LaunchPlan& plan, const GemmParams& params,
                               cudaStream_t stream) const {
  if (plan.workspace_bytes > 0 && !params.workspace) return cudaErrorInvalidValue;
  // Old cubins declare a shorter block (see gemm_params.h): the driver reads only their part.
  void* args[] = {const_cast<GemmParams*>(&params)};
  for (const KernelLaunch& l : plan) {
    if (l.entry < 0 || size_t(l.entry) >= entries_.size()) return cudaErrorInvalidValue;
    cudaError_t err =
        cudaLaunchKernel(reinterpret_cast<const void*>(entries_[size_t(l.entry)]),
                         dim3(l.grid[0], l.grid[1], l.grid[2]),
                         dim3(l.block[0], l.block[1], l.block[2]), args, l.smem_bytes, stream);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace tgemm
