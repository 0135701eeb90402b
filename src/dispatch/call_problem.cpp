#include "src/dispatch/call_problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/dispatch/dispatch_errors.h"

namespace tgemm {

namespace {

// The batch of a call into its problem: cuBLAS's rules (batchCount >= 0, 0 computes nothing),
// and members of C that never overlap. A strided call of one member is a plain GEMM (its
// strides are never used), so it shares the plain GEMM's key and tuning.
void batch_of(const GemmCall& call, bool empty, Problem* p) {
  if (call.batch < 0) invalid("batchCount must be >= 0, got {}", call.batch);
  if (call.batch > kMaxBatch)
    throw NotSupportedError(
        fmt::format("batchCount = {} is more than tgemm's kernels launch at once (at most {})",
                    call.batch, kMaxBatch));
  p->batch = std::max(1, call.batch);
  p->batch_pointers = call.batch_pointers;
  if (call.batch_pointers || call.batch <= 1 || empty) return;
  if (call.stride_a < 0 || call.stride_b < 0)
    invalid("strideA and strideB must be >= 0 (got {} and {})", call.stride_a, call.stride_b);
  if (call.stride_c < p->c_span())
    invalid(
        "strideC = {} is smaller than one member of C ({} elements with ldc = {}): the batch's "
        "members of C would overlap",
        call.stride_c, p->c_span(), call.ldc);
  p->stride_a = call.stride_a;
  p->stride_b = call.stride_b;
  p->stride_c = call.stride_c;
}

// The call's epilogue into `p` (after its batch), D apart where d is neither null nor C: a bias
// or aux pointer missing, ldd or ldaux below n, an epilogue the types refuse are invalid; an
// epilogue on a batch is not supported.
void epilogue_of(const GemmCall& call, bool empty, Problem* p) {
  Epilogue& e = p->epilogue;
  e = call.epilogue;
  e.separate_d = call.d && call.d != call.c;
  if (std::string why = e.invalid_reason(call.types); !why.empty())
    invalid("epilogue {}: {}", e.kind(), why);
  if (!e.any()) return;
  if (call.batch != 1 || call.batch_pointers)
    throw NotSupportedError(fmt::format(
        "epilogue {} on a batch: an epilogue applies to one GEMM (batchCount 1)", e.name()));
  if (e.separate_d && call.ldd < std::max(1, call.n))
    invalid("ldd = {} is smaller than the row length of D ({})", call.ldd, call.n);
  if (e.aux && call.ldaux < std::max(1, call.n))
    invalid("ldaux = {} is smaller than the row length of aux ({})", call.ldaux, call.n);
  if (empty) return;
  if (e.bias != BiasAlong::none && !call.bias)
    invalid("epilogue {} adds a bias, but the bias pointer is null", e.kind());
  if (e.aux && !call.aux) invalid("epilogue {} keeps aux, but the aux pointer is null", e.name());
  if (e.rowwise_scales && (!call.scale_a || !call.scale_b))
    invalid("rowwise scales need both scale pointers (m and n floats), and one is null");
}

// The call's sizes, types and leading dimensions, then its batch and epilogue (no alignment).
Problem shape_of(const GemmCall& call, bool* empty) {
  // The kernels index sizes and leading dimensions with 32-bit ints; a call holds nothing
  // wider, so 2^31 cannot arrive. Widening GemmCall needs the range check Problem::validate has.
  static_assert(sizeof(call.m) == 4 && sizeof(call.n) == 4 && sizeof(call.k) == 4 &&
                    sizeof(call.lda) == 4 && sizeof(call.ldb) == 4 && sizeof(call.ldc) == 4,
                "m, n, k and the leading dimensions must stay 32-bit: the kernels index them so");
  if (call.m < 0 || call.n < 0 || call.k < 0)
    invalid("m, n and k must be >= 0 (got m={}, n={}, k={})", call.m, call.n, call.k);
  if (std::string why = call.types.invalid_reason(); !why.empty())
    throw TypeNotSupportedError(fmt::format("types {}: {}", call.types.name(), why));
  Problem p;
  p.types = call.types;
  p.op_a = call.op_a;
  p.op_b = call.op_b;
  p.m = call.m;
  p.n = call.n;
  p.k = call.k;
  p.lda = call.lda;
  p.ldb = call.ldb;
  p.ldc = call.ldc;
  p.beta_zero = call.beta == 0.0f;
  // cuBLAS's rules: leading dimensions cover a row even when nothing is read.
  if (call.lda < std::max<int64_t>(1, p.a_cols()))
    invalid("lda = {} is smaller than the row length of A ({})", call.lda, p.a_cols());
  if (call.ldb < std::max<int64_t>(1, p.b_cols()))
    invalid("ldb = {} is smaller than the row length of B ({})", call.ldb, p.b_cols());
  if (call.ldc < std::max(1, call.n))
    invalid("ldc = {} is smaller than the row length of C ({})", call.ldc, call.n);
  *empty = call.m == 0 || call.n == 0 || call.batch == 0;
  batch_of(call, *empty, &p);
  epilogue_of(call, *empty, &p);
  return p;
}

}  // namespace

Problem call_problem(const GemmCall& call, bool* empty) {
  Problem p = shape_of(call, empty);
  if (*empty) return p;
  if (call.batch_pointers) {
    if (!call.c) invalid("Carray is a null pointer");
    if (call.k > 0 && (!call.a || !call.b)) invalid("Aarray or Barray is a null pointer");
    // The arrays' pointers live on the device, out of the host's sight: nothing is assumed of
    // their alignment beyond one element (a kernel's wider loads would fault on less).
    p.set_alignment(1, 1, 1);
    return p;
  }
  if (!call.c) invalid("C is a null pointer");
  if (call.k > 0 && (!call.a || !call.b)) invalid("A or B is a null pointer");
  p.set_alignment(reinterpret_cast<uintptr_t>(call.a), reinterpret_cast<uintptr_t>(call.b),
                  reinterpret_cast<uintptr_t>(call.c));
  return p;
}

Problem prepared_problem(const PrepareRequest& request, bool* empty) {
  // An address of `alignment` bytes is aligned exactly as the calls' pointers will be.
  const auto address = [](const char* name, size_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      invalid("{} must be a power of two (got {})", name, alignment);
    return uintptr_t(std::min<size_t>(alignment, 256));
  };
  const uintptr_t a = address("Aalignment", request.align_a);
  const uintptr_t b = address("Balignment", request.align_b);
  const uintptr_t c = address("Calignment", request.align_c);
  Problem p = shape_of(request.call, empty);
  if (p.batch_pointers)
    p.set_alignment(1, 1, 1);  // as a call's: see call_problem
  else
    p.set_alignment(a, b, c);
  return p;
}

GemmCall with_epilogue(GemmCall call, const EpilogueArgs& args) {
  if (args.bias && args.bias_along == BiasAlong::none)
    invalid("a bias pointer is given but the bias runs along neither M nor N (no bias)");
  if (args.bias_type != DType::f32 && args.bias_type != call.types.c)
    invalid("the bias type {} is neither C's type ({}) nor f32", to_string(args.bias_type),
            to_string(call.types.c));
  Epilogue& e = call.epilogue;
  e.activation = args.activation;
  e.bias = args.bias_along;
  e.bias_f32 = args.bias_along != BiasAlong::none && args.bias_type != call.types.c;
  e.aux = args.aux != nullptr;
  call.bias = args.bias;
  call.d = args.d;
  call.ldd = args.ldd;
  call.aux = args.aux;
  call.ldaux = args.ldaux;
  return call;
}

}  // namespace tgemm
