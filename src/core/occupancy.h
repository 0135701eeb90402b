// Occupancy: how many blocks of a kernel fit on one SM, and which resource stops the next
// one (the CUDA occupancy calculator's rules, from the cubin's resources and the launch).
// Pure arithmetic on ArchLimits, so reports and models use it without a GPU.
#pragma once

#include <cstddef>
#include <string>

#include "src/core/arch_limits.h"

namespace tgemm {

struct Occupancy {
  int blocks_per_sm = 0;      // 0: the block does not fit at all
  std::string limited_by;     // "threads", "registers", "shared memory" or "blocks per SM"
  double warps_fraction = 0;  // resident warps over the SM's maximum
};

// `registers` per thread; `smem_bytes` static plus dynamic shared memory per block.
Occupancy occupancy(const ArchLimits& limits, int threads, int registers, size_t smem_bytes);

}  // namespace tgemm
