// A call's arguments checked into the Problem they pose, as cuBLAS checks its own: sizes,
// types, leading dimensions, the batch and the epilogue (InvalidValueError naming the argument,
// TypeNotSupportedError or NotSupportedError), then the buffers and their alignment.
#pragma once

#include <cstddef>

#include "src/core/gemm_call.h"
#include "src/core/problem.h"

namespace tgemm {

// A problem to prepare: a call's arguments without its scalars and buffers (the pointers are
// ignored), and the byte alignment (a power of two) its A, B and C pointers will have.
struct PrepareRequest {
  GemmCall call;
  size_t align_a = 256, align_b = 256, align_c = 256;  // 256: as cudaMalloc returns
};

// The call's problem, aligned as its pointers are; m, n or the batch 0 leaves `empty` set (the
// buffers then go unchecked: nothing is read or written).
Problem call_problem(const GemmCall& call, bool* empty);
// The request's problem, aligned as it says.
Problem prepared_problem(const PrepareRequest& request, bool* empty);

}  // namespace tgemm
