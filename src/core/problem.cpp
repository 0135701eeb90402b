#include "src/core/problem.h"

#include <fmt/format.h>

#include "src/core/error.h"

namespace tgemm {

namespace {
// Larger than any GEMM one GPU holds; catches typos such as an extra digit group.
constexpr int64_t kMaxDim = int64_t(1) << 31;
}  // namespace

int element_bytes(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16 ? 2 : 4; }

int vector_alignment(int64_t ld, uintptr_t address, int bytes) {
  for (int width : {4, 2}) {
    if (ld % width == 0 && address % (uintptr_t(width) * uintptr_t(bytes)) == 0) return width;
  }
  return 1;
}

Problem Problem::packed(DType dtype, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.dtype = dtype;
  p.op_a = op_a;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = n;
  p.align_a = vector_alignment(p.lda, 0, element_bytes(dtype));
  p.align_b = vector_alignment(p.ldb, 0, element_bytes(dtype));
  p.align_c = vector_alignment(p.ldc, 0, element_bytes(dtype));
  return p;
}

std::string Problem::layout() const { return to_string(op_a) + to_string(op_b); }

std::string Problem::key() const {
  return fmt::format("{}_{}_m{}_n{}_k{}_a{}{}{}_b{}", to_string(dtype), layout(), m, n, k, align_a,
                     align_b, align_c, beta_zero ? 0 : 1);
}

double Problem::min_bytes() const {
  double e = element_bytes(dtype);
  double c_bytes = double(m) * double(n) * e * (beta_zero ? 1.0 : 2.0);
  return (double(m) * double(k) + double(k) * double(n)) * e + c_bytes;
}

void Problem::validate() const {
  auto check_dim = [](const char* name, int64_t v) {
    if (v < 1) fail("{} must be >= 1, got {}", name, v);
    if (v > kMaxDim) fail("{} = {} is absurdly large (limit {})", name, v, kMaxDim);
  };
  check_dim("m", m);
  check_dim("n", n);
  check_dim("k", k);
  if (lda < a_cols()) fail("lda = {} is smaller than the row length of A ({})", lda, a_cols());
  if (ldb < b_cols()) fail("ldb = {} is smaller than the row length of B ({})", ldb, b_cols());
  if (ldc < n) fail("ldc = {} is smaller than the row length of C ({})", ldc, n);
  for (int a : {align_a, align_b, align_c})
    if (a != 1 && a != 2 && a != 4) fail("alignment must be 1, 2 or 4 elements, got {}", a);
}

}  // namespace tgemm
