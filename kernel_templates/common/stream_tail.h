// The stream tail, one definition for the host (src/templates/: the grid and the workspace) and
// the device (common/stream_tail.cuh: which block computes what). A grid of `tiles` output tiles
// over `slots` resident blocks (SMs x blocks per SM) ends in a partial wave when tiles % slots
// is not zero: those tiles run alone, each on one SM, while the others idle (4097^3 in 64x128
// tiles: 2145 tiles, 8 waves of 264 and 33 more). Cut into `split` K slices each, the tail
// takes about 1/split of a wave. Whole tiles come first in the grid, one block each; the tail's
// slices follow. Like CUTLASS's stream-K with data-parallel waves first, in its simplest form.
#pragma once

#ifndef TGEMM_HOST_DEVICE
#if defined(__CUDACC__)
#define TGEMM_HOST_DEVICE __host__ __device__
#else
#define TGEMM_HOST_DEVICE
#endif
#endif

namespace tgemm {

// The most tiles a tail may have: the length of a kernel's arrival counters, far above one wave
// of the families using it (132 SMs x 2 blocks); a longer tail runs as whole tiles.
constexpr long long kStreamTailMaxTiles = 4096;

// Tiles of the last, partial wave: 0 when the tiles fill whole waves or `slots` is unknown (0).
TGEMM_HOST_DEVICE inline long long stream_tail_tiles(long long tiles, long long slots) {
  if (slots <= 0) return 0;
  const long long tail = tiles % slots;
  return tail <= kStreamTailMaxTiles ? tail : 0;
}

// Blocks of the main launch: the whole tiles once, the tail's tiles once per slice.
TGEMM_HOST_DEVICE inline long long stream_tail_blocks(long long tiles, long long tail, int split) {
  return tiles + tail * (split - 1);
}

}  // namespace tgemm
