// The performance model as the H200 here sees it (sm_90, 132 SMs, the arch's default roofs),
// for one family, for the unit tests that predict times without a GPU.
#pragma once

#include <utility>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/model/performance_model.h"
#include "src/templates/template_registry.h"

namespace tgemm::testing {

inline PerformanceModel h200_model(const char* family = "sgemm_simt",
                                   std::vector<Problem> problems = {},
                                   ModelParameters params = {}) {
  ModelContext ctx;
  ctx.family = &template_named(family);
  ctx.problems = std::move(problems);
  ctx.limits = arch_limits("sm_90");
  ctx.sm_count = 132;
  ctx.roofs = default_roofs("sm_90", GemmTypes{});
  ctx.params = params;
  return PerformanceModel(ctx);
}

}  // namespace tgemm::testing
