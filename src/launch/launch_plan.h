// How a config of the sgemm_simt template is launched for a problem: whether it can
// run it at all, the grid, block and shared memory, and the kernel parameter block.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "src/core/kernel_config.h"
#include "src/core/problem.h"

namespace tgemm {

// Mirrors `struct SgemmParams` in kernel_templates/sgemm_simt.cuh byte for byte.
struct GemmParams {
  const float* a;
  const float* b;
  float* c;
  long long lda, ldb, ldc;
  int m, n, k;
  float alpha, beta;
  int c_vec4;
};
static_assert(sizeof(GemmParams) == 72, "GemmParams must match SgemmParams in the template");

struct LaunchPlan {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t smem_bytes = 0;
  // Split-K adds its slices into C, so C = beta * C runs first (kernel `<entry>_prepare_c`).
  bool prepare_c = false;
  unsigned prepare_grid = 1, prepare_block = 256;
};

// Threads per block of a config.
int block_threads(const KernelConfig& config);
// Dynamic shared memory a config's kernel needs, in bytes.
size_t dynamic_smem_bytes(const KernelConfig& config);
// Why `config` cannot compute `problem` (dtype, vector alignment), or nullopt when it can.
std::optional<std::string> unsupported_reason(const KernelConfig& config, const Problem& problem);
// Throws Error when the config cannot run the problem.
LaunchPlan plan_launch(const KernelConfig& config, const Problem& problem);
GemmParams make_params(const Problem& problem, const float* a, const float* b, float* c,
                       float alpha, float beta);

}  // namespace tgemm
