// The dispatcher's reading of a grouped GEMM call (cuBLAS's grouped batched GEMM): its argument
// checks, and the Problem its kernel is chosen for. No CUDA: tested on the CPU.
#pragma once

#include "src/core/grouped_call.h"
#include "src/core/problem.h"

namespace tgemm {

struct GroupedProblem {
  // Problem::grouped of every group (groups without work count as problems, so calls whose
  // groups empty out share the key), the layout the groups with work share, beta zero where
  // every one's beta is; unset when `empty`.
  Problem problem;
  bool empty = true;       // no group has work (m, n and size above 0): nothing to launch
  bool one_layout = true;  // every group with work has the first one's op_a and op_b
};

// Throws InvalidValueError naming the group and argument for what cuBLAS refuses too: a negative
// size or group_size, a leading dimension below its row length (or 1), more than 2^31 - 1
// problems, and a null pointer array where a group has work; TypeNotSupportedError for types no
// GEMM computes.
GroupedProblem grouped_problem(const GroupedGemmCall& call);

}  // namespace tgemm
