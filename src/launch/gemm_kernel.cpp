#include "src/launch/gemm_kernel.h"

#include <cstdlib>
#include <cstring>

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"

namespace tgemm {
namespace {

// Programmatic dependent launch needs sm_90; TGEMM_EARLY_LAUNCH=0 turns it off (to compare,
// or to rule it out when chasing a race).
bool early_launch_available() {
  const char* env = std::getenv("TGEMM_EARLY_LAUNCH");
  if (env && std::strcmp(env, "0") == 0) return false;
  int device = 0, major = 0;
  TGEMM_CUDA_CHECK(cudaGetDevice(&device));
  TGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

}  // namespace

GemmKernel::GemmKernel(const KernelConfig& config, const std::vector<char>& cubin,
                       const std::vector<std::string>& entries, size_t main_smem_bytes)
    : config_(config),
      library_(std::make_unique<CudaLibrary>(cubin)),
      early_launch_(early_launch_available()) {
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
    cudaLaunchConfig_t launch_config = {};
    launch_config.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
    launch_config.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
    launch_config.dynamicSmemBytes = l.smem_bytes;
    launch_config.stream = stream;
    cudaLaunchAttribute early = {};
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    if (l.early && early_launch_) {
      launch_config.attrs = &early;
      launch_config.numAttrs = 1;
    }
    const cudaError_t err = cudaLaunchKernelExC(
        &launch_config, reinterpret_cast<const void*>(entries_[size_t(l.entry)]), args);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace tgemm
