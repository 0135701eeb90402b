#include "src/dispatch/grouped_problem.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/dispatch/dispatcher.h"

namespace tgemm {

namespace {

// cuBLAS's rules for one group: sizes >= 0, leading dimensions covering a row even when
// nothing is read.
void check_group(const CallGroup& g, size_t index) {
  if (g.m < 0 || g.n < 0 || g.k < 0)
    invalid("group {}: m, n and k must be >= 0 (got m={}, n={}, k={})", index, g.m, g.n, g.k);
  if (g.size < 0) invalid("group_size[{}] = {} is negative", index, g.size);
  const int a_cols = g.op_a == Op::N ? g.k : g.m, b_cols = g.op_b == Op::N ? g.n : g.k;
  if (g.lda < std::max(1, a_cols))
    invalid("group {}: lda = {} is smaller than the row length of A ({})", index, g.lda, a_cols);
  if (g.ldb < std::max(1, b_cols))
    invalid("group {}: ldb = {} is smaller than the row length of B ({})", index, g.ldb, b_cols);
  if (g.ldc < std::max(1, g.n))
    invalid("group {}: ldc = {} is smaller than the row length of C ({})", index, g.ldc, g.n);
}

}  // namespace

GroupedProblem grouped_problem(const GroupedGemmCall& call) {
  if (std::string why = call.types.invalid_reason(); !why.empty())
    throw TypeNotSupportedError(fmt::format("types {}: {}", call.types.name(), why));
  GroupedProblem out;
  std::vector<ProblemGroup> groups;
  int64_t problems = 0;
  const CallGroup* first = nullptr;  // the first group with work
  bool beta_zero = true;
  for (size_t i = 0; i < call.groups.size(); ++i) {
    const CallGroup& g = call.groups[i];
    check_group(g, i);
    problems += g.size;
    groups.push_back({g.m, g.n, g.k, g.size});
    if (g.m == 0 || g.n == 0 || g.size == 0) continue;
    if (!first) first = &g;
    out.one_layout = out.one_layout && g.op_a == first->op_a && g.op_b == first->op_b;
    beta_zero = beta_zero && g.beta == 0.0f;
  }
  if (problems > kMaxGroupedProblems)
    invalid(
        "the groups hold {} problems: the pointer arrays are indexed with 32-bit ints (at most "
        "{})",
        problems, kMaxGroupedProblems);
  if (!first) return out;
  if (!call.c) invalid("Carray is a null pointer");
  if (!call.a || !call.b) invalid("Aarray or Barray is a null pointer");
  out.empty = false;
  out.problem = Problem::grouped(call.types, first->op_a, first->op_b, std::move(groups));
  out.problem.beta_zero = beta_zero;
  return out;
}

}  // namespace tgemm
