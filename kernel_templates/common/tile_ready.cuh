// Atomic K slices in one launch: slice 0 of an output tile (blockIdx.y == 0) scales the tile of
// C by beta and then flags it ready; every slice waits for the flag before its atomics, so no
// C = beta * C launch runs before the kernel. The last slice past the flag clears it and wraps
// the count, so every launch starts from zeros (module-scope arrays start zeroed).
// No deadlock: blocks start in order of their linear index, so slice 0 of a tile starts no later
// than the tile's other slices, and it waits for nothing but its own flag.
#pragma once

namespace tgemm {

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// Slice 0, after every thread of the block stored its share of the scaled tile (all threads call
// it): the barrier orders the block's stores before thread 0's release (CUTLASS's semaphore).
__device__ __forceinline__ void publish_tile_ready(unsigned* ready) {
  __syncthreads();
  if (threadIdx.x == 0) store_release(ready, 1u);
}

// Any slice, before its atomics into the tile (all threads call it): thread 0 acquires the flag
// and counts the block in; the last of `slices` clears the flag, as every block is past it. The
// barrier passes the acquire on to the block.
__device__ __forceinline__ void wait_tile_ready(unsigned* ready, unsigned* arrivals,
                                                unsigned slices) {
  if (threadIdx.x == 0) {
    while (load_acquire(ready) == 0) __nanosleep(64);
    if (atomicInc(arrivals, slices - 1) == slices - 1) *ready = 0u;
  }
  __syncthreads();
}

}  // namespace tgemm
