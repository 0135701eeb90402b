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

// The buffers and choices of a call's epilogue, as the C and C++ APIs take them (tgemm_c.h's
// tgemmEpilogue_t): aux non-null asks for aux, d null writes into C.
struct EpilogueArgs {
  Activation activation = Activation::none;
  BiasAlong bias_along = BiasAlong::none;
  const void* bias = nullptr;
  DType bias_type = DType::f32;
  void* d = nullptr;
  int ldd = 0;
  void* aux = nullptr;
  int ldaux = 0;
};
// `call` with the epilogue of `args`; throws InvalidValueError for what its Epilogue cannot
// hold: a bias pointer without a bias_along, a bias type neither C's nor f32. The rest (a bias
// along without a pointer, aux without an activation, ldd and ldaux) is call_problem's.
GemmCall with_epilogue(GemmCall call, const EpilogueArgs& args);

// The call's problem, aligned as its pointers are; m, n or the batch 0 leaves `empty` set (the
// buffers then go unchecked: nothing is read or written).
Problem call_problem(const GemmCall& call, bool* empty);
// The request's problem, aligned as it says.
Problem prepared_problem(const PrepareRequest& request, bool* empty);

}  // namespace tgemm
