// GemmKernel: one compiled config loaded on the GPU, every entry of its cubin, ready to run
// the launch plans its template makes.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernel_templates/common/group_table.h"
#include "kernel_templates/common/tma_params.h"
#include "src/core/kernel_config.h"
#include "src/cuda/cuda_library.h"
#include "src/launch/launch_plan.h"

namespace tgemm {

class GemmKernel {
 public:
  // Loads the cubin and every entry on the current device now, not at its first launch (which
  // may be inside a stream capture), throwing Error when it cannot, and raises the main
  // entry's dynamic shared-memory limit to `main_smem_bytes` on the current device. Launches
  // marked early start early there when it is sm_90 or later, unless the environment sets
  // TGEMM_EARLY_LAUNCH=0 (then every launch waits for the one before it to end).
  GemmKernel(const KernelConfig& config, const std::vector<char>& cubin,
             const std::vector<std::string>& entries, size_t main_smem_bytes);

  const KernelConfig& config() const { return config_; }
  // Does what a first launch of `plan` would do besides launching (the occupancy query of a
  // persistent grid), so that launches inside a stream capture only launch. Never throws.
  void prepare(const LaunchPlan& plan) const;
  // Enqueues the plan's launches on `stream` with `workspace` (the caller's device scratch of
  // at least plan.workspace_bytes) in the parameter block; returns the first failure
  // (cudaErrorInvalidValue for a plan that needs a workspace and got none), never throws.
  cudaError_t launch(const LaunchPlan& plan, GemmParams params, void* workspace,
                     cudaStream_t stream) const;
  cudaError_t launch(const LaunchPlan& plan, GemmParams params, const EpilogueParams& epilogue,
                     void* workspace, cudaStream_t stream) const;
  // The same with params.workspace as given (null for plans that need none). A plan that
  // uses tensor maps gets them encoded for params.a and params.b (cudaErrorInvalidValue when TMA
  // cannot map them); the last call's maps are reused while its pointers and views repeat.
  cudaError_t launch(const LaunchPlan& plan, const GemmParams& params, cudaStream_t stream) const;
  // The same with the epilogue's parameters, which an epilogue's build reads (a plain build's
  // launches ignore them).
  cudaError_t launch(const LaunchPlan& plan, const GemmParams& params,
                     const EpilogueParams& epilogue, cudaStream_t stream) const;
  // One launch of a grouped plan (LaunchPlan::group_tile_m/n): its main entry over `tiles`
  // blocks along x, with the table of `params` (a run of GroupedLaunches). Never throws.
  cudaError_t launch_grouped(const LaunchPlan& plan, const GroupedGemmParams& params,
                             unsigned tiles, cudaStream_t stream) const;

 private:
  // One launch of a plan with these kernel arguments.
  cudaError_t launch_one(const KernelLaunch& launch, void** args, cudaStream_t stream) const;
  KernelConfig config_;
  std::unique_ptr<CudaLibrary> library_;
  std::vector<cudaKernel_t> entries_;
  bool early_launch_ = false;  // KernelLaunch::early honoured on this device

  // A tensor map of the last call that used one, and what it was encoded for.
  struct EncodedMap {
    const void* base = nullptr;
    TensorMapView view;
    TensorMap map{};
    cudaError_t update(const TensorMapView& for_view, const void* for_base);
  };
  struct EncodedMaps {
    EncodedMap a, b, c;
  };
  cudaError_t tensor_maps(const LaunchPlan& plan, const GemmParams& params,
                          TmaGemmParams* out) const;
  // The main entry's blocks (whole clusters) resident at once for `launch`'s block and shared
  // memory, asked of the runtime on the first persistent launch; 0 when it cannot say.
  unsigned resident_blocks(const KernelLaunch& launch) const;
  mutable std::atomic<unsigned> resident_blocks_{0};
  mutable std::mutex maps_mutex_;
  mutable EncodedMaps last_maps_;
};

}  // namespace tgemm
