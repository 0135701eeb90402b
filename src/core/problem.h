// Problem: what one GEMM call computes, and the key the database and dispatcher match on.
// Row-major storage: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
#pragma once

#include <cstdint>
#include <string>

#include "src/core/dtype.h"

namespace tgemm {

struct Problem {
  // ---- Functional key: what is computed.
  GemmTypes types;
  Op op_a = Op::N;
  Op op_b = Op::N;
  int64_t m = 0, n = 0, k = 0;
  bool beta_zero = true;
  // ---- Preference key (with the GPU's arch): what makes one kernel faster or able to run.
  // Largest of 16, 8, 4 and 2 bytes that divides both the pointer's address and the leading
  // dimension in bytes, per operand (never below one element); vector loads need it.
  int align_a = 16, align_b = 16, align_c = 16;
  // Leading dimensions in elements (row strides); beyond their alignment they do not change
  // which kernel is right, so they stay out of both keys.
  int64_t lda = 0, ldb = 0, ldc = 0;

  // A problem on freshly allocated, densely packed buffers (ld = row length).
  static Problem packed(GemmTypes types, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k);

  // Rows/columns of A and B as stored (row-major): A is m x k for N, k x m for T.
  int64_t a_rows() const { return op_a == Op::N ? m : k; }
  int64_t a_cols() const { return op_a == Op::N ? k : m; }
  int64_t b_rows() const { return op_b == Op::N ? k : n; }
  int64_t b_cols() const { return op_b == Op::N ? n : k; }

  std::string layout() const;  // "NT"
  // "f16_NT_m16_n4096_k4096_b0": types, layout, shape, beta==0.
  std::string functional_key() const;
  // functional_key() + "_a16.16.4": the alignments in bytes of A, B and C. What the
  // database stores and the dispatcher matches first.
  std::string key() const;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Fewest bytes a GEMM must move: A and B read once, C written (and read if beta != 0).
  double min_bytes() const;

  // Throws Error naming the bad field (types, dimensions >= 1 and sane, ld >= row length,
  // alignments a power of two from one element to 16 bytes).
  void validate() const;
};

// Largest of 16, 8, 4, 2 bytes (at least one element) that divides the leading dimension
// in bytes and the pointer's address.
int alignment_bytes(int64_t ld, uintptr_t address, int element_bytes);

}  // namespace tgemm
