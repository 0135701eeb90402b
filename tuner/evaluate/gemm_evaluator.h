// GemmEvaluator: the worker's GPU side. Prepares one problem (random inputs, cuBLAS FP32
// reference), then loads, verifies and times kernels on it. Plus the host-only checks.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "src/core/dtype.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "tuner/evaluate/evaluation_types.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {

// ---- Verification (host only; inline so CPU-only code and tests need no CUDA library) ------

// Largest accepted ||C - Cref||_F / ||Cref||_F for a result of these types with inner
// dimension k, on inputs uniform in [-1, 1], against a reference in FP32 (or FP64) on the same
// inputs as stored (16-bit inputs rounded).
// f32 accumulation (compute f32 and f32x3, and 16-bit inputs, whose products are exact in
//   f32): two FP32 dot products of length k that sum in different orders (tiles, split-K, FMA
//   contraction) differ by about sqrt(k) * 2^-24 relative (rounding errors add up like a
//   random walk); 8x that leaves room for unlucky orders, and the floor 2^-20 covers tiny k,
//   where alpha/beta scaling rounds as much as the sum does.
// tf32 (one pass, against the unrounded inputs): rounding the inputs dominates and does not
//   grow with k: 4x TF32's unit roundoff 2^-11 times 2 (two rounded operands per product).
// FP8 (against the f32 GEMM of the same FP8 values, scales applied): the products are exact,
//   but Hopper's FP8 tensor cores add them keeping about 14 bits of each addend (DeepSeek-V3
//   report, section 3.3.2); kernels promote every 128-deep slice's sum to f32, so the error is
//   one slice's, held to tf32's bound (a dropped k32 step of K = 4096 is 0.09 relative).
// A 16-bit C adds its own rounding: twice its unit roundoff (f16 2^-11, bf16 2^-8).
inline double relative_error_bound(const GemmTypes& types, int64_t k) {
  const double kk = double(std::max<int64_t>(k, 1));
  double f32_sum = std::max(8.0 * std::sqrt(kk) * 0x1p-24, 0x1p-20);
  if (types.compute == ComputeType::tf32) return 8.0 * 0x1p-11;
  if (types.fp8()) f32_sum = 8.0 * 0x1p-11;
  switch (types.c) {
    case DType::f16:
      return f32_sum + 2.0 * 0x1p-11;
    case DType::bf16:
      return f32_sum + 2.0 * 0x1p-8;
    case DType::f32:
    case DType::e4m3:  // never C (GemmTypes::invalid_reason)
    case DType::e5m2:
      break;
  }
  return f32_sum;
}

// f32x3 (3xTF32) claims FP32 accuracy, so it is judged by cuBLAS SGEMM on the same inputs:
// both are measured against an FP64 reference, and the kernel may exceed SGEMM's error by at
// most this factor. Three f32 roundings per product (one per term) where FFMA has one cost
// about 2x (1.9x measured on the host emulation in tests/unit/f32x3_accuracy_test.cpp), and
// summation order (tiles, split-K, the tensor core's adds) a little more; a missing TF32
// term (about 2^-11 relative) costs a thousand times more.
inline constexpr double kF32x3ErrorFactor = 3.0;
// What the big/small split loses whatever k: the dropped small*small term and the small
// part's own TF32 rounding, each under 2^-22 of a product. For small k SGEMM's error is
// below this (a few roundings of 2^-24), and no split kernel can match it, so the bound
// never goes lower.
inline constexpr double kF32x3SplitError = 0x1p-22;
// The three terms' f32 sums, per root of k: their rounding grows with the partial sums, and
// SGEMM's error, one sample on the problem's inputs, is no yardstick for it on a handful of
// outputs. Host emulation (tests/unit/f32x3_accuracy_test.cpp; 1 x 7 outputs): the
// bound of 3x SGEMM alone rejected the correct sum in 0.02-0.3 % of draws at k = 1-7 and 10-12 %
// at k = 64-1024; with this floor in 0.003 % at most, while a sum missing a term still fails
// from k = 2 on. On hundreds of outputs it stays under 3x SGEMM's error.
inline constexpr double kF32x3SumError = 0x1p-23;

// The least error bound a correct f32x3 result on a problem can be held to: the split's
// floor, the three sums' (growing as sqrt(k)), both scaled by how far cancellation shrinks the
// result below its products (`cancellation`, at least 1: f32x3_cancellation).
inline double f32x3_floor(int64_t k, double cancellation) {
  const double sums = kF32x3SumError * std::sqrt(double(std::max<int64_t>(k, 1)));
  return std::max(kF32x3SplitError, sums) * std::max(cancellation, 1.0);
}

// ||sqrt(squares)||_F / ||Cref||_F over the m x n results (row stride ldc): `squares` holds, per
// result, the sum of its squared terms (alpha^2 sum_l a^2 b^2 + beta^2 c^2). About 1 for random
// signs; large where the terms cancel, and the rounding of each term stays.
inline double f32x3_cancellation(const double* squares, const double* c_ref, int64_t m, int64_t n,
                                 int64_t ldc) {
  double sq = 0, ref2 = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      sq += squares[i * ldc + j];
      ref2 += c_ref[i * ldc + j] * c_ref[i * ldc + j];
    }
  return ref2 > 0 ? std::sqrt(sq / ref2) : 1.0;
}

// Largest accepted error against FP64 of an f32x3 kernel, given cuBLAS SGEMM's error
// against the same FP64 reference on the same inputs (check_result's measure) and the floor
// of the problem (f32x3_floor; the split's alone by default).
inline double f32x3_error_bound(double sgemm_error, double floor = kF32x3SplitError) {
  return std::max(kF32x3ErrorFactor * sgemm_error, floor);
}

// An element may differ from the reference by at most this many times bound * rms(Cref):
// one wrong element moves the norm of a 4096 x 4096 result by too little to see.
inline constexpr double kElementSlack = 4.0;

// The bits of an element nobody wrote: C is filled with 0xFF bytes (a NaN in every type)
// before each run; load_element maps a 16-bit poison to this one.
inline constexpr uint32_t kPoisonBits = kPoisonBits32;

inline bool is_poison(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits == kPoisonBits;
}

struct ResultCheck {
  bool ok = true;
  double rel_error = 0;  // ||C - Cref||_F / ||Cref||_F, accumulated in double
  std::string error;     // the first problem found (index and values), when !ok
};

// C (host copy) against the reference, both m x n with row stride ldc (Ref: float or double).
// Fails on: an element never written (still poison), NaN or Inf, a relative error over
// `bound`, or one element off by more than kElementSlack * bound * rms(Cref). A C without
// elements passes (its pointers may be null; its rms would be 0/0).
template <typename Ref>
ResultCheck check_result(const float* c, const Ref* c_ref, int64_t m, int64_t n, int64_t ldc,
                         double bound) {
  ResultCheck check;
  if (m <= 0 || n <= 0) return check;
  double diff2 = 0, ref2 = 0, worst = -1;
  int64_t worst_i = 0, worst_j = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const float x = c[i * ldc + j];
      const double r = double(c_ref[i * ldc + j]);
      if (!std::isfinite(x)) {
        check.ok = false;
        check.rel_error = HUGE_VAL;
        check.error =
            is_poison(x)
                ? fmt::format("C[{}][{}] was never written (still holds the NaN poison)", i, j)
                : fmt::format("C[{}][{}] = {} (expected {})", i, j, x, r);
        return check;
      }
      const double d = double(x) - r;
      diff2 += d * d;
      ref2 += r * r;
      if (std::abs(d) > worst) {
        worst = std::abs(d);
        worst_i = i;
        worst_j = j;
      }
    }
  }
  const double elements = double(m) * double(n);
  check.rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const double tolerance = kElementSlack * bound * std::sqrt(ref2 / elements);
  if (check.rel_error <= bound && worst <= tolerance) return check;
  check.ok = false;
  // Report the first element over the tolerance (the start of a bad tile or row), else the worst.
  int64_t bad_i = worst_i, bad_j = worst_j;
  for (int64_t i = 0, found = 0; i < m && !found; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (std::abs(double(c[i * ldc + j]) - double(c_ref[i * ldc + j])) > tolerance) {
        bad_i = i;
        bad_j = j;
        found = 1;
        break;
      }
  check.error = fmt::format(
      "relative error {:.3g} (bound {:.3g}); C[{}][{}] = {} but expected {} (element tolerance "
      "{:.3g})",
      check.rel_error, bound, bad_i, bad_j, c[bad_i * ldc + bad_j],
      double(c_ref[bad_i * ldc + bad_j]), tolerance);
  return check;
}

// A C buffer of `elements` floats holds the m x n matrix at element `offset` with row stride
// ldc; everything else (row padding, guards before and after) must still hold the poison.
// Returns where the first stray write landed, or nullopt.
inline std::optional<std::string> find_write_outside(const float* buffer, int64_t elements,
                                                     int64_t offset, int64_t m, int64_t n,
                                                     int64_t ldc) {
  for (int64_t e = 0; e < std::min(offset, elements); ++e)
    if (!is_poison(buffer[e])) return fmt::format("wrote {} elements before C", offset - e);
  // Only the padding of each row is visited: this runs on every verified result.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = n; j < ldc; ++j) {
      const int64_t e = offset + i * ldc + j;
      if (e < elements && !is_poison(buffer[e]))
        return fmt::format(
            "wrote into the row padding of C at row {}, column {} (n = {}, ldc = {})", i, j, n,
            ldc);
    }
  for (int64_t e = std::max<int64_t>(offset + m * ldc, 0); e < elements; ++e)
    if (!is_poison(buffer[e]))
      return fmt::format("wrote past the end of C (element {} after the last row)",
                         e - offset - m * ldc);
  return std::nullopt;
}

// The f32x3 verdict on a result checked against the FP64 reference with the f32 bound
// (check_result: unwritten or NaN elements, single bad elements), given SGEMM's error against
// the same reference: nullopt when FP32-accurate, else why not (both errors named).
inline std::optional<std::string> f32x3_rejection(const ResultCheck& check, double sgemm_error,
                                                  double floor = kF32x3SplitError) {
  if (check.ok && check.rel_error <= f32x3_error_bound(sgemm_error, floor)) return std::nullopt;
  return fmt::format(
      "error vs FP64 {:.3g}, cuBLAS SGEMM's {:.3g}: an f32x3 kernel may exceed SGEMM's by at "
      "most {}x (floor {:.3g}){}",
      check.rel_error, sgemm_error, kF32x3ErrorFactor, floor, check.ok ? "" : "; " + check.error);
}

// ---- GemmEvaluator -------------------------------------------------------------------------

// Scalars of a prepared problem; beta must be 0 when the problem says beta_zero.
struct GemmScalars {
  float alpha = 1.0f;
  float beta = 0.0f;
};

// Owns the GPU of one worker: a stream, a cuBLAS handle and the prepared problem's buffers.
// Never throws for a bad kernel or a CUDA error: results carry the status. After a sticky
// CUDA error (context_broken()) every later call fails and the process must exit.
class GemmEvaluator {
 public:
  // Selects the device and creates the stream and cuBLAS handle; throws Error without one.
  explicit GemmEvaluator(int device);
  ~GemmEvaluator();
  GemmEvaluator(const GemmEvaluator&) = delete;
  GemmEvaluator& operator=(const GemmEvaluator&) = delete;

  const DeviceInfo& device() const;

  // Fresh random inputs in [-1, 1] (new seed each time) in the problem's element types,
  // C_ref by cuBLAS in pedantic FP32 on the same inputs (and FP64 on the host for small
  // problems, to check cuBLAS itself), and the matching cuBLAS call timed (SGEMM for f32 and
  // f32x3, TF32 for tf32, cublasGemmEx for 16-bit types) unless !time_cublas. ok == false
  // when it cannot. f32x3 problems of every size also get an FP64 reference on the GPU
  // (cublasDgemm on the inputs widened to double) and SGEMM's error against it
  // (CublasTiming::sgemm_rel_error), the yardstick of f32x3_error_bound. time_vendor (with
  // time_cublas): the vendor calls as contenders, each verified like a kernel, and timed
  // interleaved with cuBLAS (CublasTiming::vendor_trials).
  CublasTiming prepare(const Problem& problem, const TimingOptions& timing,
                       GemmScalars scalars = {}, bool time_cublas = true, bool time_vendor = false);
  bool prepared() const;

  // Load, reject unsupported problems (invalid), run once on poisoned C and verify
  // (wrong_result; f32x3: against FP64 within f32x3_error_bound, and max_rel_error is the
  // error against FP64), then time. Load errors are launch_failed, faults crashed.
  // cutoff_us > 0: after verification two warm runs are timed; both slower than the cutoff,
  // the kernel is reported with the faster (runs == 2), since it cannot be the best.
  // The config's family (the registry, by template name) says how to load and launch it.
  TrialResult evaluate(const KernelConfig& config, const std::vector<char>& cubin,
                       double cutoff_us = 0);
  // Verifies like evaluate, then times the kernel and cuBLAS interleaved in one loop.
  Comparison compare(const KernelConfig& config, const std::vector<char>& cubin);

  // True after a sticky CUDA error (illegal address, ...): the context is ruined.
  bool context_broken() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tgemm
