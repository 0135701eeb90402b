#include "src/launch/launch_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/core/error.h"

namespace tgemm {

int block_threads(const KernelConfig& config) {
  return int((config.get("BM") / config.get("TM")) * (config.get("BN") / config.get("TN")));
}

size_t dynamic_smem_bytes(const KernelConfig& config) {
  const int64_t stages = config.get("STAGES"), bk = config.get("BK");
  const int64_t floats =
      stages * bk *
      ((config.get("BM") + config.get("PAD_A")) + (config.get("BN") + config.get("PAD_B")));
  return size_t(floats) * sizeof(float);
}

std::optional<std::string> unsupported_reason(const KernelConfig& config, const Problem& problem) {
  if (config.template_name != "sgemm_simt")
    return fmt::format("unknown template '{}'", config.template_name);
  if (problem.dtype != DType::f32)
    return fmt::format("sgemm_simt computes f32, not {}", to_string(problem.dtype));
  const int64_t vec = config.get("VEC");
  if (problem.align_a % vec != 0 || problem.align_b % vec != 0)
    return fmt::format("VEC={} needs A and B aligned to {} elements (have {} and {})", vec, vec,
                       problem.align_a, problem.align_b);
  return std::nullopt;
}

LaunchPlan plan_launch(const KernelConfig& config, const Problem& problem) {
  if (auto reason = unsupported_reason(config, problem))
    fail("{} cannot run {}: {}", config.canonical_name(), problem.key(), *reason);
  const int64_t bm = config.get("BM"), bn = config.get("BN");
  LaunchPlan plan;
  plan.grid[0] = unsigned((problem.n + bn - 1) / bn);
  plan.grid[1] = unsigned((problem.m + bm - 1) / bm);
  plan.grid[2] = unsigned(config.get_or("SPLIT_K", 1));
  plan.block[0] = unsigned(block_threads(config));
  plan.smem_bytes = dynamic_smem_bytes(config);
  plan.prepare_c = plan.grid[2] > 1;
  const int64_t elements = problem.m * problem.n;
  plan.prepare_grid = unsigned(std::clamp<int64_t>((elements + 255) / 256, 1, 65535));
  return plan;
}

GemmParams make_params(const Problem& problem, const float* a, const float* b, float* c,
                       float alpha, float beta) {
  GemmParams p{};
  p.a = a;
  p.b = b;
  p.c = c;
  p.lda = problem.lda;
  p.ldb = problem.ldb;
  p.ldc = problem.ldc;
  p.m = int(problem.m);
  p.n = int(problem.n);
  p.k = int(problem.k);
  p.alpha = alpha;
  p.beta = beta;
  p.c_vec4 = problem.align_c == 4 ? 1 : 0;
  return p;
}

}  // namespace tgemm
