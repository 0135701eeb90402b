// Atomic K slices in one launch: slice 0 of an output tile (blockIdx.y == 0) scales the tile of
// C by beta first and flags it ready; the other slices wait for the flag before their atomics,
// so no C = beta * C launch runs before the kernel. The last slice to leave clears the flag and
// wraps its count, so every launch starts from zeros (module-scope arrays start zeroed).
// No deadlock: blocks start in order of their linear index, so slice 0 of a tile starts no later
// than the tile's other slices, and it waits for nothing.
#pragma once

namespace tgemm {

// Slice 0, after every thread of the block stored its share of the scaled tile.
__device__ __forceinline__ void publish_tile_ready(unsigned* ready) {
  __threadfence();  // each thread's stores to C are visible device-wide
  __syncthreads();
  if (threadIdx.x == 0) atomicExch(ready, 1u);
}

// Any slice, before its atomics into the tile (all threads of the block call it).
__device__ __forceinline__ void wait_tile_ready(const unsigned* ready) {
  if (threadIdx.x == 0)
    while (*static_cast<const volatile unsigned*>(ready) == 0) __nanosleep(100);
  __threadfence();  // C as slice 0 left it, before this block's atomics
  __syncthreads();
}

// Any slice, after its atomics: the last of `slices` to leave resets the tile's flag.
__device__ __forceinline__ void leave_tile(unsigned* ready, unsigned* arrivals, unsigned slices) {
  __syncthreads();
  if (threadIdx.x == 0 && atomicInc(arrivals, slices - 1) == slices - 1) atomicExch(ready, 0u);
}

}  // namespace tgemm
