// Inputs for the tuning run's parts (plan, strategies, measuring): shipped spaces loaded and
// enumerated on an arch, named problems, and a variant group built from them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/dtype.h"
#include "tuner/input/problem_set.h"
#include "tuner/session/family_space.h"
#include "tuner/session/tuning_plan.h"

namespace tgemm::testing {

inline std::string shipped_space_path(const std::string& family) {
  return std::string(TGEMM_SOURCE_DIR) + "/configs/spaces/" + family + ".yaml";
}

// The shipped spaces of `families`, in that order, each enumerated on `limits`.
inline std::vector<std::unique_ptr<FamilySpace>> enumerated_spaces(
    const std::vector<std::string>& families, const ArchLimits& limits) {
  std::vector<std::string> paths;
  for (const std::string& f : families) paths.push_back(shipped_space_path(f));
  auto spaces = load_family_spaces(paths);
  for (auto& fs : spaces) fs->enumeration = fs->space.enumerate(limits);
  return spaces;
}

// A packed NN problem of `types` ("f32", "f16", ...) named "MxNxK".
inline NamedProblem named_problem(const std::string& types, int64_t m, int64_t n, int64_t k) {
  return {std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
          Problem::packed(parse_gemm_types(types), Op::N, Op::N, m, n, k)};
}

// The family's names in the group's order.
inline std::vector<std::string> family_names(const VariantGroup& group) {
  std::vector<std::string> names;
  for (const FamilySpace* fs : group.families) names.push_back(fs->family->name());
  return names;
}

}  // namespace tgemm::testing
