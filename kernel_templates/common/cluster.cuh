// Thread block clusters (sm_90+): the blocks of one cluster run at the same time on one GPC
// and can read each other's shared memory, so partial results meet there without a workspace,
// atomics or a second launch. Inline PTX, so NVRTC needs no cooperative_groups headers.
#pragma once

#include "common/async_copy.cuh"

namespace tgemm {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// This block's rank within its cluster (0 .. blocks per cluster - 1).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives; shared-memory writes made before it are
// visible to the cluster's reads after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

// The float at `p` (this block's shared memory) as block `rank` of the cluster holds it.
__device__ __forceinline__ float cluster_load(const float* p, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(shared_address(p)), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

#endif

}  // namespace tgemm
