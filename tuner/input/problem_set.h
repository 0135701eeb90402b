// ProblemSet: the shapes a tuning or benchmark run works on, read from a shapes YAML file
// (format: configs/shapes/README.md).
#pragma once

#include <string>
#include <vector>

#include "src/core/problem.h"

namespace tgemm {

struct NamedProblem {
  std::string name;   // the shape's `name`, or "MxNxK" ("BxMxNxK" for a batch, "MxNxK_<epilogue>"
                      // with an epilogue, "g<B>_MxNxK" for a grouped GEMM of bucket B x MxNxK)
                      // when it has none
  Problem problem;    // packed leading dimensions (and strides, unless given), beta == 0
  int64_t calls = 0;  // `calls:`, how often a recording application ran it; 0 when not given
};

// Throws Error naming the file (and line where known) for: a missing or unreadable
// file, malformed YAML, an empty shape list, unknown or repeated keys, m/n/k <= 0 or over
// 2^31 - 1, a `calls` that is not an integer >= 0, an operand of more than 2^31 elements, a
// `batch` below 1 or past kMaxBatch, strides without a batch, a negative stride or a stride_c
// that makes C's members overlap (naming the field), an
// unknown dtype or layout, an unknown `epilogue`, a `bias_along` or `bias_type` for an epilogue
// without a bias (or not n/m, f32/C's type), `aux` without an activation, an epilogue on a
// batch, and a shape (same Problem::key()) or hand-given name listed twice (naming both lines).
// The epilogue keys (epilogue, bias_along, bias_type, aux, separate_d) may also be defaults.
// A grouped shape (`groups:` of {m, n, k, count}) is refused for: an empty list, a group that is
// not such a map, sizes as above, a count below 1, top-level sizes, batch or epilogue keys (or
// an epilogue in the defaults), and another grouped shape of the same bucket (Problem::grouped).
std::vector<NamedProblem> load_problem_set(const std::string& path);
// load_problem_set's problems for tgemm-tune, which does not tune grouped GEMMs yet (the
// dispatcher serves them untuned, tgemm-bench times them): Error naming the file and the first
// grouped shape.
std::vector<NamedProblem> load_tunable_problem_set(const std::string& path);

}  // namespace tgemm
