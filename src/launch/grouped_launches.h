// GroupedLaunches: the launches of one grouped GEMM call (common/group_table.h): its groups with
// work, in order, in runs that one launch's table holds, each with the tiles it launches.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_templates/common/group_table.h"
#include "src/core/grouped_call.h"

namespace tgemm {

class GroupedLaunches {
 public:
  // Tiles of tile_m x tile_n elements of C (the plan's group tile). The call must be checked
  // already (the dispatcher's grouped_problem): sizes and counts >= 0, arrays present.
  GroupedLaunches(const GroupedGemmCall& call, int tile_m, int tile_n);

  // Fills the next launch's block and its tiles (one block each); false once every problem is
  // placed. A launch holds at most kMaxLaunchGroups entries of one lda and ldb and fewer than
  // 2^31 tiles: a group past that goes on in the next launch from the problem it reached.
  // Groups without work (m, n or size 0) take no entry; their problems' pointers are skipped.
  // Throws Error for one problem of 2^31 tiles or more (no grid numbers them).
  bool next(GroupedGemmParams* params, unsigned* tiles);

 private:
  void next_group();
  // Places what it can of the current group in `params` (a group without work takes nothing),
  // `launched` tiles being there already; true when the whole group is placed.
  bool place(GroupedGemmParams* params, int64_t* launched);

  const GroupedGemmCall& call_;
  int tile_m_, tile_n_;
  size_t group_ = 0;           // the next group with problems to place
  int placed_ = 0;             // problems of that group already placed
  int64_t first_problem_ = 0;  // pointer-array index of the group's first problem
};

}  // namespace tgemm
