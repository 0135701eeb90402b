#include "src/launch/grouped_launches.h"

#include <algorithm>

#include "src/core/error.h"

namespace tgemm {

namespace {

// One more than the largest tile index of a launch: tiles are numbered with ints.
constexpr int64_t kMaxLaunchTiles = INT32_MAX;

bool has_work(const CallGroup& g) { return g.m > 0 && g.n > 0 && g.size > 0; }

}  // namespace

GroupedLaunches::GroupedLaunches(const GroupedGemmCall& call, int tile_m, int tile_n)
    : call_(call), tile_m_(tile_m), tile_n_(tile_n) {
  if (tile_m <= 0 || tile_n <= 0) fail("a grouped launch needs a tile (got {}x{})", tile_m, tile_n);
}

bool GroupedLaunches::next(GroupedGemmParams* params, unsigned* tiles) {
  while (group_ < call_.groups.size() &&
         (!has_work(call_.groups[group_]) || placed_ == call_.groups[group_].size))
    next_group();
  if (group_ == call_.groups.size()) return false;
  *params = GroupedGemmParams{};
  params->gemm.a = call_.a;
  params->gemm.b = call_.b;
  params->gemm.c = const_cast<void**>(call_.c);  // the kernel reads the array, never writes it
  params->gemm.lda = call_.groups[group_].lda;
  params->gemm.ldb = call_.groups[group_].ldb;
  int64_t launched = 0;
  while (group_ < call_.groups.size() && params->groups < kMaxLaunchGroups &&
         place(params, &launched))
    next_group();
  *tiles = unsigned(launched);
  return true;
}

void GroupedLaunches::next_group() {
  first_problem_ += call_.groups[group_].size;
  placed_ = 0;
  ++group_;
}

bool GroupedLaunches::place(GroupedGemmParams* params, int64_t* launched) {
  const CallGroup& g = call_.groups[group_];
  if (!has_work(g)) return true;
  if (g.lda != params->gemm.lda || g.ldb != params->gemm.ldb) return false;
  const int64_t tiles_m = (int64_t(g.m) + tile_m_ - 1) / tile_m_;
  const int64_t tiles_n = (int64_t(g.n) + tile_n_ - 1) / tile_n_;
  const int64_t per_problem = tiles_m * tiles_n;
  if (per_problem > kMaxLaunchTiles)
    fail("a {}x{} problem of group {} has {} tiles of {}x{}: more than one launch numbers", g.m,
         g.n, group_, per_problem, tile_m_, tile_n_);
  const int64_t fits = (kMaxLaunchTiles - *launched) / per_problem;
  if (fits == 0) return false;
  const int problems = int(std::min<int64_t>(fits, g.size - placed_));
  GroupEntry& e = params->group[params->groups++];
  e.m = g.m;
  e.n = g.n;
  e.k = g.k;
  e.ldc = g.ldc;
  e.alpha = g.alpha;
  e.beta = g.beta;
  e.first_problem = int(first_problem_ + placed_);
  e.first_tile = int(*launched);
  e.tiles_m = int(tiles_m);
  e.tiles_n = int(tiles_n);
  *launched += per_problem * problems;
  placed_ += problems;
  return placed_ == g.size;  // else the rest of the group opens the next launch
}

}  // namespace tgemm
