#include "src/launch/gemm_kernel.h"

#include <cstdlib>
#include <cstring>

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/tensor_map.h"

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
  for (const std::string& entry : entries) {
    entries_.push_back(library_->kernel(entry));
    // Querying an entry loads it (lazy loading would at its first launch).
    cudaFuncAttributes attributes{};
    TGEMM_CUDA_CHECK(
        cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(entries_.back())));
  }
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

cudaError_t GemmKernel::launch(const LaunchPlan& plan, GemmParams params,
                               const EpilogueParams& epilogue, void* workspace,
                               cudaStream_t stream) const {
  params.workspace = workspace;
  return launch(plan, params, epilogue, stream);
}

cudaError_t GemmKernel::launch(const LaunchPlan& plan, const GemmParams& params,
                               cudaStream_t stream) const {
  return launch(plan, params, EpilogueParams{}, stream);
}

cudaError_t GemmKernel::launch(const LaunchPlan& plan, const GemmParams& params,
                               const EpilogueParams& epilogue, cudaStream_t stream) const {
  if (plan.workspace_bytes > 0 && !params.workspace) return cudaErrorInvalidValue;
  // Old cubins declare a shorter block (see gemm_params.h): the driver reads only their part.
  // A TMA family's launches read the common block, then the maps (launches of the plan that
  // take the common block alone read its first part). An epilogue's build takes the epilogue
  // as its second parameter (TMA: the block's last field), which the driver reads only there.
  TmaGemmParams with_maps;
  void* args[] = {const_cast<GemmParams*>(&params), const_cast<EpilogueParams*>(&epilogue)};
  if (plan.uses_tensor_maps()) {
    if (const cudaError_t err = tensor_maps(plan, params, &with_maps); err != cudaSuccess)
      return err;
    with_maps.epilogue = epilogue;
    args[0] = &with_maps;
  }
  for (const KernelLaunch& l : plan)
    if (const cudaError_t err = launch_one(l, args, stream); err != cudaSuccess) return err;
  return cudaSuccess;
}

cudaError_t GemmKernel::launch_grouped(const LaunchPlan& plan, const GroupedGemmParams& params,
                                       unsigned tiles, cudaStream_t stream) const {
  // A grouped plan is its main launch alone (GemmTemplate::unsupported_reason).
  if (plan.count != 1 || plan.launches[0].entry != 0 || plan.group_tile_m <= 0 || tiles == 0)
    return cudaErrorInvalidValue;
  KernelLaunch main = plan.launches[0];
  main.grid[0] = tiles;
  main.grid[1] = main.grid[2] = 1;
  void* args[] = {const_cast<GroupedGemmParams*>(&params)};
  return launch_one(main, args, stream);
}

cudaError_t GemmKernel::launch_one(const KernelLaunch& l, void** args, cudaStream_t stream) const {
  if (l.entry < 0 || size_t(l.entry) >= entries_.size()) return cudaErrorInvalidValue;
  cudaLaunchConfig_t launch_config = {};
  launch_config.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
  if (l.persistent && l.entry == 0)
    if (const unsigned resident = resident_blocks(l); resident > 0 && resident < l.grid[0])
      launch_config.gridDim.x = resident;
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
  return cudaLaunchKernelExC(&launch_config,
                             reinterpret_cast<const void*>(entries_[size_t(l.entry)]), args);
}

void GemmKernel::prepare(const LaunchPlan& plan) const {
  for (const KernelLaunch& l : plan)
    if (l.persistent && l.entry == 0) resident_blocks(l);
}

unsigned GemmKernel::resident_blocks(const KernelLaunch& l) const {
  if (const unsigned known = resident_blocks_.load(std::memory_order_relaxed)) return known;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(l.grid[0]);
  config.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
  config.dynamicSmemBytes = l.smem_bytes;
  cudaLaunchAttribute cluster = {};  // the kernel's own cluster shape (or clusters of one)
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = l.cluster;
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(entries_.front()),
                                     &config) != cudaSuccess ||
      clusters <= 0) {
    cudaGetLastError();  // the query's failure is not the caller's error
    return 0;
  }
  const unsigned resident = unsigned(clusters) * l.cluster;
  resident_blocks_.store(resident, std::memory_order_relaxed);
  return resident;
}

cudaError_t GemmKernel::EncodedMap::update(const TensorMapView& for_view, const void* for_base) {
  if (base == for_base && view == for_view) return cudaSuccess;
  *this = EncodedMap{};
  if (const cudaError_t err = encode_tensor_map(for_view, for_base, &map); err != cudaSuccess)
    return err;
  base = for_base;
  view = for_view;
  return cudaSuccess;
}

cudaError_t GemmKernel::tensor_maps(const LaunchPlan& plan, const GemmParams& params,
                                    TmaGemmParams* out) const {
  out->gemm = params;
  std::lock_guard<std::mutex> lock(maps_mutex_);
  EncodedMaps& last = last_maps_;
  // A packed operand lies in the workspace, at its map's offset.
  const auto base = [&](const TensorMapView& view, const void* operand) -> const void* {
    return view.workspace_offset < 0
               ? operand
               : static_cast<const char*>(params.workspace) + view.workspace_offset;
  };
  if (const cudaError_t err = last.a.update(plan.map_a, base(plan.map_a, params.a));
      err != cudaSuccess)
    return err;
  if (const cudaError_t err = last.b.update(plan.map_b, base(plan.map_b, params.b));
      err != cudaSuccess)
    return err;
  out->a = last.a.map;
  out->b = last.b.map;
  // C's map only where the plan stores by tensor copies and this call's C allows them (see
  // TmaGemmParams): the kernel stores C directly otherwise, and reads no map.
  out->c = TensorMap{};
  out->c_by_copy = plan.stores_by_tensor_map() && params.c_aligned16 &&
                   params.n * element_bytes(plan.map_c.dtype) % 16 == 0;
  if (out->c_by_copy) {
    if (const cudaError_t err = last.c.update(plan.map_c, params.c); err != cudaSuccess) return err;
    out->c = last.c.map;
  }
  return cudaSuccess;
}

}  // namespace tgemm
