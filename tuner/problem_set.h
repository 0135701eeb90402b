// ProblemSet: the shapes a tuning or benchmark run works on, read from a shapes YAML file
// (format: configs/shapes/README.md).
#pragma once

#include <string>
#include <vector>

#include "src/core/problem.h"

namespace tgemm {

struct NamedProblem {
  std::string name;  // the shape's `name`, or "MxNxK" when it has none
  Problem problem;   // packed leading dimensions, beta == 0
};

// Throws Error naming the file (and line where known) for: a missing or unreadable
// file, malformed YAML, an empty shape list, unknown keys, m/n/k <= 0 or absurd,
// an unknown dtype or layout.
std::vector<NamedProblem> load_problem_set(const std::string& path);

}  // namespace tgemm
