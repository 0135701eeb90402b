// The layout of an operand packed into the workspace (common/pack_operand.cuh), one
// definition for the host (workspace bytes, src/templates/) and the device (where the main
// kernel reads), so the two can never drift. A packed operand is a dense rows x cols matrix
// (cols contiguous) padded with zeros to whole tiles along both dimensions.
#pragma once

#if defined(__CUDACC__)
#define TGEMM_HOST_DEVICE __host__ __device__
#else
#define TGEMM_HOST_DEVICE
#endif

namespace tgemm {

struct PackedLayout {
  long long rows;   // rows of the copy: the source's rows rounded up to whole tiles
  long long ld;     // its row stride in elements: the columns rounded up to whole tiles
  long long bytes;  // what it takes of the workspace, rounded up to 256 (the next one's start)
};

TGEMM_HOST_DEVICE inline long long pack_round_up(long long x, long long to) {
  return (x + to - 1) / to * to;
}

// A rows x cols operand in tiles of tile_rows x tile_cols elements of elem_bytes each; rows
// stay whole 16-byte chunks whatever the tile.
TGEMM_HOST_DEVICE inline PackedLayout packed_layout(long long rows, long long cols, int tile_rows,
                                                    int tile_cols, int elem_bytes) {
  PackedLayout l;
  l.rows = pack_round_up(rows > 0 ? rows : 1, tile_rows);
  l.ld = pack_round_up(pack_round_up(cols > 0 ? cols : 1, tile_cols), 16 / elem_bytes);
  l.bytes = pack_round_up(l.rows * l.ld * elem_bytes, 256);
  return l;
}

}  // namespace tgemm
