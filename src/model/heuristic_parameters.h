// The numbers behind the performance model's and the kernel selector's judgement, in one
// place. Each is a factor the rules would otherwise hide in a branch; docs/selector.md gives
// what each changes, the replay its default was set by, and how to replay again, and
// tests/unit/heuristic_parameters_test.cpp shows the effect of each.
#pragma once

#include <cstddef>

namespace tgemm {

struct ModelParameters {
  // Every launch costs about this much on its own: launch latency plus the ramp of a grid.
  double launch_us = 2.5;
  // Tile loads of neighbouring blocks mostly hit L2, which serves about this many times the
  // device-memory copy rate.
  double l2_over_dram = 2.5;
  // Resident warps per SM that hide the FFMA, shared- and global-memory latencies of a
  // register-tiled kernel; with fewer, the rate falls as the square root of their share.
  double warps_to_hide_latency = 16;
  // A config whose register estimate exceeds its cap (MIN_BLOCKS) spills and runs this much
  // slower.
  double spill_factor = 3.0;
  // Split-K and stream-tail partials go through L2 atomics or a workspace round trip: each
  // byte costs this many copied bytes.
  double partial_cost = 3.0;
  // Each halving of the copy width below 16 bytes adds this share to the time.
  double narrow_copy_cost = 0.05;
  // One partial sum read back in turn by a last-arriving block (serial_partial_reads), its
  // reads in flight overlapped.
  double serial_read_us = 0.032;
  // Main-loop steps a block spends outside its loop (filling the pipeline, the epilogue),
  // which short K slices and shallow BK pay most.
  double fixed_steps = 4.0;
};

struct SelectorParameters {
  // A config measured on a tuned shape is evidence for other shapes only when it ran within
  // this factor of that shape's fastest: slower ones are where the model misjudges.
  double good_there = 1.5;
  // How many of the nearest tuned shapes lend their measurements to an untuned one.
  size_t neighbours = 4;
  // A carried time grows by this share per unit of the shapes' distance (the square root of
  // the squared log-M, N, K distance), so a far neighbour's config must beat a near one's by
  // more than the model's error.
  double far_penalty = 0.05;
  // Added to the squared distance of two shapes whose alignments differ: their kernels chose
  // vector widths for them.
  double alignment_penalty = 2.0;
  // A split sibling (a SPLIT_K depth that never ran on the neighbour) is served only when
  // predicted faster by this factor than what ran there.
  double unmeasured_margin = 1.2;
  // Resident warps per SM at which a streaming kernel reaches the full copy rate; with fewer
  // its rate falls in proportion (each warp keeps about the same bytes in flight).
  double stream_warps_per_sm = 12;
  // A shipped default whose tiles the problem fills at least this share is taken at once.
  double good_fill = 0.75;
  // A later default replaces the fullest so far only when it fills this many times more.
  double clearly_better_fill = 1.25;
  // A default launching at least this share of the SMs' count of blocks runs a full wave:
  // a wave a few SMs short runs as fast as a full one, with bigger tiles.
  double full_wave = 0.9;
  // The model the selector predicts with.
  ModelParameters model;
};

}  // namespace tgemm
