// What the GEMV families share on the host side: a small side of C (SIDE=0: M, SIDE=1: N), the
// large operand X streamed once, along K or along L as it is stored, and the transposed twin
// every SIDE=1 config has in a SIDE=0 one.
#pragma once

#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/templates/kernel_description.h"

namespace tgemm::gemv {

// The kernels' X_K_CONTIG: the large operand stored contiguous along K.
inline bool x_k_contig(const KernelConfig& config, const Problem& problem) {
  return config.get("SIDE") == 0 ? problem.op_b == Op::T : problem.op_a == Op::N;
}

// The small side swapped: SIDE=1 on a problem runs the loop SIDE=0 runs on its transpose.
inline KernelConfig side_swapped(const KernelConfig& config) {
  KernelConfig twin = config;
  twin.set("SIDE", 1 - config.get("SIDE"));
  return twin;
}

// A GEMV config's description: it streams its large operand once, at memory bandwidth, through
// the loop of X's stored direction (along K or along L), and has its side-swapped twin.
inline KernelDescription streamed_description(const TileShape& tile, const KernelConfig& config,
                                              const Problem& problem, int registers) {
  KernelDescription d;
  d.tile = tile;
  d.bandwidth_bound = true;
  d.code_path = x_k_contig(config, problem) ? "along K" : "along L";
  d.estimated_registers = registers;
  d.transposed = side_swapped(config);
  return d;
}

}  // namespace tgemm::gemv
