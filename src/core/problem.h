// Problem: what one GEMM call computes, and the key the database and dispatcher match on.
// Row-major storage: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
#pragma once

#include <cstdint>
#include <string>

#include "src/core/dtype.h"

namespace tgemm {

struct Problem {
  DType dtype = DType::f32;
  Op op_a = Op::N;
  Op op_b = Op::N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;  // leading dimensions in elements (row strides)
  // Largest vector width in elements (1, 2 or 4) that divides both the pointer
  // offset and the leading dimension of each operand; vector kernels need it.
  int align_a = 1, align_b = 1, align_c = 1;
  bool beta_zero = true;

  // A problem on freshly allocated, densely packed buffers (ld = row length).
  static Problem packed(DType dtype, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k);

  // Rows/columns of A and B as stored (row-major): A is m x k for N, k x m for T.
  int64_t a_rows() const { return op_a == Op::N ? m : k; }
  int64_t a_cols() const { return op_a == Op::N ? k : m; }
  int64_t b_rows() const { return op_b == Op::N ? k : n; }
  int64_t b_cols() const { return op_b == Op::N ? n : k; }

  std::string layout() const;  // "NT"
  // Functional key: dtype, layout, shape, alignment, beta==0. Leading dimensions
  // beyond their alignment do not change which kernel is right, so they stay out.
  std::string key() const;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Fewest bytes a GEMM must move: A and B read once, C written (and read if beta != 0).
  double min_bytes() const;

  // Throws Error naming the bad field (dimensions >= 1 and sane, ld >= row length).
  void validate() const;
};

// Largest of 4, 2, 1 elements that divides the leading dimension and the pointer's
// element offset from a 16-byte boundary.
int vector_alignment(int64_t ld, uintptr_t address, int element_bytes);

int element_bytes(DType dtype);

}  // namespace tgemm
