// PerformanceModel: an analytical time estimate of one config of a family on one problem, from
// what the family tells without compiling (tile, split-K, launch, threads, shared memory), the
// arch's limits, the SM count and the device's roofs. The model strategy ranks a space with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_ceiling.h"
#include "src/core/problem.h"
#include "src/model/heuristic_parameters.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

// The roofs a prediction is placed against.
struct Roofs {
  double flops_per_s = 0;  // the problem's compute type (FFMA for f32)
  double bytes_per_s = 0;  // device-memory copy bandwidth
};

// What the model needs besides a config and a problem: passed explicitly, since a Strategy
// alone knows only the configs.
struct ModelContext {
  const GemmTemplate* family = nullptr;
  std::vector<Problem> problems;  // the variant group's problems, in the session's order
  ArchLimits limits;
  int sm_count = 0;
  Roofs roofs;
  ModelParameters params;
};

// The datasheet-like roofs used when a database has no measured ceilings: sm_90 (H200) FFMA
// 66.9 TFLOP/s and copy 4.26 TB/s as measured there; sm_80 (A100) 19.5 TFLOP/s, 1.5 TB/s;
// sm_75 (T4) 8.1 TFLOP/s, 0.28 TB/s; sm_86 35 TFLOP/s, 0.8 TB/s; sm_89 (L4) 30 TFLOP/s,
// 0.27 TB/s. Tensor types scale the FFMA roof (f16/bf16 16x, tf32 8x, f32x3 8/3x).
Roofs default_roofs(const std::string& arch, const GemmTypes& types);
// The measured ceilings of one device where present (copy_bandwidth and the compute kind of
// `types`), else default_roofs.
Roofs roofs_from(const std::vector<DeviceCeiling>& ceilings, const std::string& arch,
                 const GemmTypes& types);
// SMs of the arch's common part when no GPU is probed (sm_90 132, sm_80 108, sm_75 40, ...).
int default_sm_count(const std::string& arch);

// A tiled family's main launch as groups of alike blocks: each block of a group runs `k_tiles`
// steps of its tile's K. Split-K slices make one group; a stream tail (TileShape::tail_split)
// makes two, the whole tiles and the tail's slices.
struct BlockGroup {
  int64_t blocks = 0;
  int64_t k_tiles = 0;
};
struct BlockGroups {
  BlockGroup whole, tail;
};

class PerformanceModel {
 public:
  explicit PerformanceModel(ModelContext context) : ctx_(std::move(context)) {}

  // The pieces, each also unit-tested.
  // Whole waves of `blocks` over `resident` block slots (sm_count x blocks per SM).
  static int64_t waves(int64_t blocks, int64_t resident);
  // The groups of a tiled main launch of `blocks` blocks (from the family's plan).
  static BlockGroups block_groups(const TileShape& tile, const Problem& problem, int64_t blocks);
  // Share of the launched tile work (padded M x N x K of whole tiles) that is real FLOPs.
  static double useful_fraction(const TileShape& tile, const Problem& problem);
  // Registers per thread a family of register-tiled kernels needs: the accumulators, the A
  // and B fragments, the global-to-shared staging and ~24 for addresses and loop state.
  static int estimated_registers(const TileShape& tile, int threads);
  // Share of the FFMA rate reachable with `warps` resident per SM (latency hiding).
  double occupancy_efficiency(int warps_per_sm) const;
  // Bytes every kernel moves at least: A and B once, C read and written.
  static double unique_bytes(const Problem& p);

  const ModelContext& context() const { return ctx_; }
  // Predicted microseconds; infinity when the config cannot run the problem (unsupported,
  // more K slices than K tiles, a block that does not fit an SM).
  double predict_us(const KernelConfig& config, const Problem& problem) const;
  // predict_us for every problem of the context, in its order.
  std::vector<double> predict_all(const KernelConfig& config) const;

 private:
  // The split-K partials' traffic.
  double partial_bytes(const Problem& p, int64_t split_k) const;
  // A bandwidth-bound family's time: its bytes at the copy rate plus its launches.
  double streamed_us(const Problem& p, int64_t split_k, size_t launches) const;
  // A bandwidth-bound family's compute time: its tile's padded M x N times K at its types' roof.
  double padded_compute_us(const TileShape& t, const Problem& p) const;

  ModelContext ctx_;
};

}  // namespace tgemm
