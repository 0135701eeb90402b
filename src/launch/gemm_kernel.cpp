#include "src/launch/gemm_kernel.h"

#include "src/cuda/cuda_check.h"

namespace tgemm {

GemmKernel::GemmKernel(const KernelConfig& config, const std::vector<char>& cubin,
                       const std::string& entry)
    : config_(config), library_(std::make_unique<CudaLibrary>(cubin)) {
  main_ = library_->kernel(entry);
  prepare_c_ = library_->kernel(entry + "_prepare_c");
  // Above 48 KiB a block gets dynamic shared memory only after opting in.
  TGEMM_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(main_),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(dynamic_smem_bytes(config_))));
}

cudaError_t GemmKernel::launch(const LaunchPlan& plan, const GemmParams& params,
                               cudaStream_t stream) const {
  void* args[] = {const_cast<GemmParams*>(&params)};
  if (plan.prepare_c) {
    cudaError_t err =
        cudaLaunchKernel(reinterpret_cast<const void*>(prepare_c_), dim3(plan.prepare_grid),
                         dim3(plan.prepare_block), args, 0, stream);
    if (err != cudaSuccess) return err;
  }
  return cudaLaunchKernel(
      reinterpret_cast<const void*>(main_), dim3(plan.grid[0], plan.grid[1], plan.grid[2]),
      dim3(plan.block[0], plan.block[1], plan.block[2]), args, plan.smem_bytes, stream);
}

}  // namespace tgemm
