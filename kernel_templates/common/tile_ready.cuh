// Atomic K slices in one launch: slice 0 of an output tile (blockIdx.y == 0) scales the tile of
// C by beta and then flags it ready; every slice waits for the flag before its atomics, so no
// C = beta * C launch runs before the kernel. The last slice to leave clears the flag and
// wraps its count, so every launch starts from zeros (module-scope arrays start zeroed).
// No deadlock: blocks start in order of their linear index, so slice 0 of a tile starts no later
// than the tile's other slices, and it waits for nothing.
#pragma once

namespace tgemm {

// Slice 0, after every thread of the block stored its share of the scaled tile (all threads call
// it): the barrier orders the block's stores before thread 0's fence, which makes them visible
// device-wide before the flag (a release, as CUTLASS's semaphore does it).
__device__ __forceinline__ void publish_tile_ready(unsigned* ready) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicExch(ready, 1u);
  }
}

// Any slice, before its atomics into the tile (all threads call it): thread 0 sees the flag and
// fences (an acquire), the barrier passes that on to the block.
__device__ __forceinline__ void wait_tile_ready(const unsigned* ready) {
  if (threadIdx.x == 0) {
    while (*static_cast<const volatile unsigned*>(ready) == 0) __nanosleep(100);
    __threadfence();
  }
  __syncthreads();
}

// Any slice, after its atomics: the last of `slices` to leave resets the tile's flag.
__device__ __forceinline__ void leave_tile(unsigned* ready, unsigned* arrivals, unsigned slices) {
  __syncthreads();
  if (threadIdx.x == 0 && atomicInc(arrivals, slices - 1) == slices - 1) atomicExch(ready, 0u);
}

}  // namespace tgemm
