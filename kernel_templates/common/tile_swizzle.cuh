// Block -> output tile order shared by the templates: SWIZZLE tile rows are launched
// together, so blocks that run at the same time share B's columns in L2.
#pragma once

namespace tgemm {

// The (tile_m, tile_n) of the pid-th block to run in a grid of grid_m x grid_n tiles.
__device__ __forceinline__ void swizzled_tile_of(int pid, int grid_m, int grid_n, int swizzle,
                                                 int* tile_m, int* tile_n) {
  const int group_size = swizzle * grid_n;
  const int first_m = (pid / group_size) * swizzle;
  const int rows_in_group = min(grid_m - first_m, swizzle);
  *tile_m = first_m + (pid % group_size) % rows_in_group;
  *tile_n = (pid % group_size) / rows_in_group;
}

// The (tile_m, tile_n) of this block in a grid of gridDim.y x gridDim.x tiles. The same order
// as swizzled_tile_of, written out on the 2-D grid: the cubins tuned with it keep their code
// (calling swizzled_tile_of reorders the PTX, and the machine code of some configs with it).
__device__ __forceinline__ void swizzled_tile(int swizzle, int* tile_m, int* tile_n) {
  const int grid_n = gridDim.x, grid_m = gridDim.y;
  const int pid = blockIdx.y * grid_n + blockIdx.x;
  const int group_size = swizzle * grid_n;
  const int first_m = (pid / group_size) * swizzle;
  const int rows_in_group = min(grid_m - first_m, swizzle);
  *tile_m = first_m + (pid % group_size) % rows_in_group;
  *tile_n = (pid % group_size) / rows_in_group;
}

}  // namespace tgemm
