// The stream tail on the device (common/stream_tail.h has the arithmetic the host shares): which
// tile and K slice a block computes, and the handover of a tail tile's partial sums to the last
// of its slices to finish, which adds them in slice order (repeatable results) and writes C.
// Per tile, an arrival counter in the module (zero when the cubin loads; the last arrival wraps
// it back to zero, so every launch starts from zeros; the plan sets module_state).
#pragma once

#include "common/stream_tail.h"
#include "common/tile_swizzle.cuh"  // swizzled_tile_of: a tile's (tile_m, tile_n)

namespace tgemm {

struct StreamTailWork {
  int tile;        // linear tile index, as a block's index in a 1-D grid of whole tiles
  int slice;       // the K slice of it (0 for a whole tile)
  int slices;      // its tile's K slices: 1 for a whole tile, `split` in the tail
  int tail_index;  // the tile's place in the tail (its counter and partials); -1 when whole
};

// This block's work in a 1-D grid of stream_tail_blocks(tiles, tail, split) blocks: the tail's
// length is what the grid has beyond one block per tile. Consecutive blocks of the tail are
// different tiles, so a tile's slices are spread over the SMs.
__device__ __forceinline__ StreamTailWork stream_tail_work(int tiles, int split) {
  const int tail = (int(gridDim.x) - tiles) / (split - 1);
  StreamTailWork w{int(blockIdx.x), 0, 1, -1};
  const int whole = tiles - tail;
  if (w.tile >= whole) {
    const int u = w.tile - whole;
    w.tail_index = u % tail;
    w.slice = u / tail;
    w.slices = split;
    w.tile = whole + w.tail_index;
  }
  return w;
}

// Called by every thread after it stored its partials: whether this block is the last of the
// tile's `slices` to arrive at `count`. The fence makes each thread's stores visible device-wide
// before the block arrives; the last block fences again before it reads the others' partials.
__device__ __forceinline__ bool stream_tail_last_to_arrive(unsigned* count, unsigned slices) {
  __threadfence();
  __syncthreads();
  const bool last =
      __syncthreads_or(threadIdx.x == 0 && atomicInc(count, slices - 1) == slices - 1);
  if (last) __threadfence();
  return last;
}

}  // namespace tgemm
