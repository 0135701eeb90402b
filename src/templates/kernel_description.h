// KernelDescription: what the performance model, the selector and the compile scheduler read
// of one config's build for a problem, stated by its family in one place
// (GemmTemplate::describe), so that serving policy asks a family one question.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/core/kernel_config.h"

namespace tgemm {

// The output tile one block computes and how the grid is cut, for the selector's models.
struct TileShape {
  int64_t m = 1, n = 1, k = 1;  // block tile and the K depth of one main-loop step
  int64_t split_k = 1;          // K slices, one block each
  int64_t blocks_per_sm = 1;    // blocks the config asks to keep resident per SM
  int64_t tail_split = 1;       // K slices of each tile past the last whole wave (stream tail)
};

struct KernelDescription {
  TileShape tile;
  // Whether the build streams its large operand once at memory bandwidth (GEMV-like) instead
  // of reusing register tiles: the performance model then counts its bytes, not tile FLOPs.
  bool bandwidth_bound = false;
  // Bytes per global-memory copy of the main loop (16: 128-bit). Narrower copies move the same
  // bytes in more instructions, each of which costs issue slots and load-unit throughput.
  int copy_bytes = 16;
  // Partial sums one thread of a strip's (or tile's) last block to arrive reads back in turn
  // once the rest of the grid is done: a one-launch K reduction that grows with the K slices
  // whatever the GPU's width. The performance model prices them; 0: no such step.
  int64_t serial_partial_reads = 0;
  // Which of the family's loops the build for the problem's layout runs, where the layout
  // picks between loops of their own (empty: one loop for every layout). A config's speed on
  // one loop says nothing of another's, so the selector scales it only by its records on the
  // same loop.
  std::string code_path;
  // Registers per thread the build is expected to take, for a streaming family whose
  // residency the selector needs (how many of its blocks fit an SM); 0: no estimate (the
  // tiled families' occupancy comes from their tile).
  int estimated_registers = 0;
  // The config of the family that computes C^T = op(B)^T op(A)^T (M and N swapped, each
  // operand's op flipped) with the same memory traffic, or nullopt: the selector counts what
  // the config measured for that twin too (a GEMV streaming A along K for N = 1 is the one
  // streaming B along K for M = 1).
  std::optional<KernelConfig> transposed;
};

}  // namespace tgemm
