// Problem: what one GEMM call computes, and the key the database and dispatcher match on.
// Row-major storage: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/batch_form.h"
#include "src/core/dtype.h"
#include "src/core/epilogue.h"

namespace tgemm {

// One group of a grouped GEMM: `count` problems of one shape (cuBLAS's group_size).
struct ProblemGroup {
  int64_t m = 0, n = 0, k = 0;
  int64_t count = 1;
  bool operator==(const ProblemGroup&) const = default;
};

struct Problem {
  // ---- Functional key: what is computed.
  GemmTypes types;
  Op op_a = Op::N;
  Op op_b = Op::N;
  int64_t m = 0, n = 0, k = 0;
  // Independent GEMMs of this shape computed by one call (cuBLAS's batchCount); 1: a plain GEMM.
  int64_t batch = 1;
  // The batch's matrices are given by device arrays of pointers (cuBLAS's gemmBatched) rather
  // than a stride apart; what the kernels read differs, so it is part of the key.
  bool batch_pointers = false;
  // A grouped GEMM (cuBLAS's grouped batched GEMM; empty for every other problem): its groups,
  // whose problems' matrices are given by device arrays of pointers. m, n, k and batch are then
  // the bucket its kernel is chosen for and keyed by (grouped()).
  std::vector<ProblemGroup> groups;
  bool beta_zero = true;
  // What is applied to the result before it is stored (bias, activation, aux, D apart); none
  // for a plain GEMM. Single GEMMs only (validate).
  Epilogue epilogue{};
  // ---- Preference key (with the GPU's arch): what makes one kernel faster or able to run.
  // Largest of 16, 8, 4 and 2 bytes that divides both the pointer's address and the leading
  // dimension in bytes, per operand (never below one element); vector loads need it.
  int align_a = 16, align_b = 16, align_c = 16;
  // Leading dimensions in elements (row strides); beyond their alignment they do not change
  // which kernel is right, so they stay out of both keys.
  int64_t lda = 0, ldb = 0, ldc = 0;
  // Elements between consecutive members of a strided batch (as the leading dimensions, out of
  // the keys beyond their alignment); 0 for batch 1 and for pointer arrays.
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;

  // A problem on freshly allocated, densely packed buffers (ld = row length).
  static Problem packed(GemmTypes types, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k);
  // `batch` packed problems, each matrix right after the one before (stride = its size).
  static Problem packed_batch(GemmTypes types, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k,
                              int64_t batch);
  // A grouped GEMM of these groups (at least one with work: m, n and count above 0). Its m, n and
  // k are those of its heaviest group (the most multiply-adds over its problems) and its batch
  // the count of its problems, each rounded up to three significant bits (1000 -> 1024, 612 ->
  // 640, 14336 stays): calls whose sizes vary from call to call (a mixture of experts' tokens
  // per expert) share a few keys, eight per octave, and so a few cached choices, while layers of
  // other weights keep theirs. Leading dimensions packed for that shape; alignment one element
  // (the pointers live on the device, out of the host's sight).
  static Problem grouped(GemmTypes types, Op op_a, Op op_b, std::vector<ProblemGroup> groups);

  BatchForm batch_form() const {
    if (!groups.empty()) return BatchForm::grouped;
    if (batch_pointers) return BatchForm::pointers;
    return batch > 1 ? BatchForm::strided : BatchForm::single;
  }
  // More than one GEMM, or pointer arrays: what a family must serve through common/batch.cuh.
  bool batched() const { return batch_form() != BatchForm::single; }

  // Sets align_a/b/c for A, B and C whose first members are at these addresses, from the
  // leading dimensions and the strides (every member's address).
  void set_alignment(uintptr_t a, uintptr_t b, uintptr_t c);

  // Rows/columns of A and B as stored (row-major): A is m x k for N, k x m for T.
  int64_t a_rows() const { return op_a == Op::N ? m : k; }
  int64_t a_cols() const { return op_a == Op::N ? k : m; }
  int64_t b_rows() const { return op_b == Op::N ? k : n; }
  int64_t b_cols() const { return op_b == Op::N ? n : k; }

  // Elements one member's A, B and C span with their leading dimensions: the least stride that
  // keeps members apart.
  int64_t a_span() const { return (a_rows() - 1) * lda + a_cols(); }
  int64_t b_span() const { return (b_rows() - 1) * ldb + b_cols(); }
  int64_t c_span() const { return (m - 1) * ldc + n; }

  std::string layout() const;  // "NT"
  // "f16_NT_m16_n4096_k4096_b0": types, layout, shape, beta==0; a batch adds "_x8" after k
  // ("_x8p" for pointer arrays, "_x8g" for a grouped GEMM's 8 problems) and an epilogue
  // "_e<name>" at the end ("_ebias_gelu"), so a plain GEMM keeps the key it had before batches
  // and epilogues.
  std::string functional_key() const;
  // functional_key() + "_a16.16.4": the alignments in bytes of A, B and C. What the
  // database stores and the dispatcher matches first.
  std::string key() const;
  // The call's floating-point operations: 2 m n k per problem (a grouped GEMM's, its groups').
  double flops() const;
  // Fewest bytes a GEMM must move: A and B read once, C written (and read if beta != 0), and
  // an epilogue's bias read and aux written; a grouped GEMM's, its groups' problems'.
  double min_bytes() const;

  // Throws Error naming the bad field (types, dimensions >= 1 and sane, ld >= row length,
  // alignments a power of two from one element to 16 bytes, batch >= 1, and strides of a
  // strided batch that keep C's members apart and A's and B's within reach of 64-bit offsets,
  // an epilogue that applies to the types, on one GEMM; a grouped GEMM's groups each of sizes
  // and count >= 1, its shape what grouped() makes of them).
  void validate() const;
  // The batch's part of validate().
  void validate_batch() const;

 private:
  void validate_groups() const;
};

// The most members of a batch: a launch numbers them with gridDim.z.
inline constexpr int64_t kMaxBatch = 65535;
// The most problems of a grouped GEMM: kernels index its pointer arrays with 32-bit ints.
inline constexpr int64_t kMaxGroupedProblems = INT32_MAX;

// Largest of 16, 8, 4, 2 bytes (at least one element) that divides the leading dimension
// in bytes, the pointer's address and, for a strided batch, the stride in bytes (every
// member's address).
int alignment_bytes(int64_t ld, uintptr_t address, int element_bytes, int64_t stride = 0);

}  // namespace tgemm
