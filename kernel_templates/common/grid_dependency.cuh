// Programmatic dependent launch (sm_90+): a plan's later launch may start while the launch
// before it still runs (KernelLaunch::early), so its blocks are resident, past their launch
// latency, when that grid ends. Such a kernel must wait_for_prior_grid() before it reads what
// the prior grid writes or writes what it reads. Both are no-ops on older archs and for
// launches made without the attribute.
#pragma once

namespace tgemm {

// Blocks until the grid launched before this one in the stream has ended and its writes are
// visible.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next launch of the stream (if made early) start once every block of this grid has
// called this or ended; it changes nothing about what that launch may read.
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace tgemm
