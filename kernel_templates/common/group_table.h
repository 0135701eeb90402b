// The parameter block of a grouped GEMM's launch (cuBLAS's grouped batched GEMM; a build with
// TGEMM_BATCH=3, common/batch.cuh): one definition, included by the host
// (src/launch/grouped_launches.h) and the device. Each group holds GEMMs of one shape; the launch
// computes every tile of every problem of its groups, one block per tile, numbered group by group
// (blockIdx.x). The host fills the table per call and passes it by value, in the kernel's
// parameter space: nothing to allocate or copy per call, so a captured graph holds the call's
// shapes as it holds its pointers. The driver's 4 KiB parameter limit bounds the groups per
// launch: a call with more runs one launch per kMaxLaunchGroups groups. A launch's groups share
// the leading dimensions of A and B, kept at fixed offsets of the block: read from a computed
// entry, they moved a main loop's address arithmetic into registers (a 128x128 tile of shifted
// 16-byte copies took 158 registers instead of 125, one block per SM instead of two).
#pragma once

#ifdef __CUDACC__
#include "common/gemm_params.h"
#else
#include "kernel_templates/common/gemm_params.h"
#endif

namespace tgemm {

// One group of a launch: its problems' shape, C's leading dimension (elements) and the scalars,
// where its pointers and tiles begin, and the tile grid of each of its problems.
struct GroupEntry {
  int m, n, k;
  int ldc;
  float alpha, beta;
  int first_problem;     // index of its first problem in the call's pointer arrays
  int first_tile;        // blockIdx.x of its first problem's first tile
  int tiles_m, tiles_n;  // one problem's tiles along M and N (each at least 1)
};

// An enumerator, not a variable: a namespace-scope constexpr variable in device code is a
// constant of the module (a symbol and bytes in every cubin that includes this header).
enum : int { kMaxLaunchGroups = 64 };

struct GroupedGemmParams {
  // a, b and c: the call's device arrays of pointers, one per problem of every group in order
  // (cuBLAS's Aarray, Barray, Carray); lda and ldb: every group's of the launch. Its other
  // fields are unread.
  GemmParams gemm;
  int groups;  // entries of `group` in use (1..kMaxLaunchGroups), each with at least one tile
  GroupEntry group[kMaxLaunchGroups];
};
static_assert(sizeof(GroupedGemmParams) <= 4096, "kernel parameters are limited to 4 KiB");

}  // namespace tgemm
