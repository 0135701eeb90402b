// The evaluator's host-side checks: the error bound passes FP32 results summed in another
// order and fails the usual kernel bugs (shifted rows, a zero tile, one bad element, NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

// Row-major m x k times k x n on random inputs in [-1, 1], in three summation orders.
struct Gemm {
  int64_t m, n, k;
  std::vector<float> a, b;
  std::vector<double> exact;      // FP64
  std::vector<float> sequential;  // FP32, k in order (a naive kernel or a BLAS)
  std::vector<float> tiled;       // FP32, 8-deep slices summed per 4 split-K parts (a tuned kernel)

  Gemm(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    a.resize(size_t(m * k));
    b.resize(size_t(k * n));
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    exact.assign(size_t(m * n), 0);
    sequential.assign(size_t(m * n), 0);
    tiled.assign(size_t(m * n), 0);
    const int64_t split = std::max<int64_t>(1, k / 4);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double e = 0;
        float s = 0, total = 0, part = 0;
        for (int64_t l = 0; l < k; ++l) {
          const float x = a[size_t(i * k + l)], y = b[size_t(l * n + j)];
          e += double(x) * double(y);
          s = std::fma(x, y, s);
          part = std::fma(x, y, part);
          if ((l + 1) % split == 0 || l + 1 == k) {
            total += part;
            part = 0;
          }
        }
        exact[size_t(i * n + j)] = e;
        sequential[size_t(i * n + j)] = s;
        tiled[size_t(i * n + j)] = total;
      }
  }
  double bound() const { return relative_error_bound(GemmTypes{}, k); }
};

const Gemm& medium() {
  static const Gemm g(256, 256, 1024);
  return g;
}

TEST(Verification, bound_grows_like_sqrt_k_with_a_floor) {
  const double b1 = relative_error_bound(GemmTypes{}, 1);
  const double b4k = relative_error_bound(GemmTypes{}, 4096);
  const double b16k = relative_error_bound(GemmTypes{}, 16384);
  EXPECT_GT(b1, 0);
  EXPECT_EQ(relative_error_bound(GemmTypes{}, 0), b1);
  EXPECT_NEAR(b16k / b4k, 2.0, 1e-12);
  EXPECT_NEAR(b4k, 8 * 64 * std::ldexp(1.0, -24), 1e-15);
  EXPECT_LT(b16k, 1e-4);  // still tight enough to mean something at large K
  for (const char* t : {"tf32", "f16", "bf16"})
    EXPECT_GT(relative_error_bound(gemm_types(t), 4096), b4k) << t;
  // f16 and bf16 inputs accumulate in f32 on the rounded inputs: only the output's rounding
  // is added, so an f32 C keeps the f32 bound.
  EXPECT_EQ(relative_error_bound(gemm_types("f16", "f32"), 4096), b4k);
  EXPECT_EQ(relative_error_bound(gemm_types("f32x3"), 4096), b4k);
  EXPECT_GT(relative_error_bound(gemm_types("bf16"), 4096),
            relative_error_bound(gemm_types("f16"), 4096));
}

TEST(Verification, accepts_fp32_results_summed_in_other_orders) {
  const Gemm& g = medium();
  const ResultCheck tiled_vs_seq =
      check_result(g.tiled.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
  EXPECT_TRUE(tiled_vs_seq.ok) << tiled_vs_seq.error;
  const ResultCheck tiled_vs_exact =
      check_result(g.tiled.data(), g.exact.data(), g.m, g.n, g.n, g.bound());
  EXPECT_TRUE(tiled_vs_exact.ok) << tiled_vs_exact.error;
  const ResultCheck seq_vs_exact =
      check_result(g.sequential.data(), g.exact.data(), g.m, g.n, g.n, g.bound());
  EXPECT_TRUE(seq_vs_exact.ok) << seq_vs_exact.error;
  // Margin: an honest FP32 result sits well inside the bound, not at its edge.
  EXPECT_GT(tiled_vs_seq.rel_error, 0);
  EXPECT_LT(tiled_vs_seq.rel_error, g.bound() / 4);
  EXPECT_LT(seq_vs_exact.rel_error, g.bound() / 4);
}

TEST(Verification, accepts_sequential_fp32_at_large_k) {
  const Gemm g(16, 16, 65536);  // the worst summation order, long dot products
  const ResultCheck check =
      check_result(g.sequential.data(), g.exact.data(), g.m, g.n, g.n, g.bound());
  EXPECT_TRUE(check.ok) << check.error;
  EXPECT_LT(check.rel_error, g.bound() / 2);
}

TEST(Verification, rejects_one_tile_row_shifted_by_one) {
  const Gemm& g = medium();
  std::vector<float> c = g.tiled;
  // Tile (1, 1) of 128 x 128: its row 2 holds row 3 (an off-by-one row index).
  for (int64_t j = 128; j < 256; ++j) c[size_t(130 * g.n + j)] = c[size_t(131 * g.n + j)];
  const ResultCheck check = check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.error.find("C[130][128]"), std::string::npos) << check.error;
}

TEST(Verification, rejects_a_zeroed_128x128_tile) {
  const Gemm& g = medium();
  std::vector<float> c = g.tiled;
  for (int64_t i = 128; i < 256; ++i)
    for (int64_t j = 0; j < 128; ++j) c[size_t(i * g.n + j)] = 0;
  const ResultCheck check = check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
  EXPECT_FALSE(check.ok);
  EXPECT_GT(check.rel_error, 0.4);  // a quarter of C is gone: sqrt(1/4)
  EXPECT_NE(check.error.find("C[128][0]"), std::string::npos) << check.error;
}

TEST(Verification, rejects_a_missing_last_k_slice) {
  // A kernel that drops the last BK = 8 slice of K (an off-by-one tile count).
  const Gemm& g = medium();
  std::vector<float> c(size_t(g.m * g.n));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      float s = 0;
      for (int64_t l = 0; l < g.k - 8; ++l)
        s = std::fma(g.a[size_t(i * g.k + l)], g.b[size_t(l * g.n + j)], s);
      c[size_t(i * g.n + j)] = s;
    }
  const ResultCheck check = check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
  EXPECT_FALSE(check.ok);
}

TEST(Verification, rejects_one_element_off_that_the_norm_cannot_see) {
  const Gemm g(1024, 1024, 64);
  std::vector<float> c = g.tiled;
  c[size_t(700 * g.n + 513)] += 0.01f;  // ~0.2% of a typical element
  const ResultCheck check = check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
  EXPECT_LT(check.rel_error, g.bound());  // the Frobenius norm alone would pass it
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.error.find("C[700][513]"), std::string::npos) << check.error;
}

TEST(Verification, rejects_nan_inf_and_unwritten_elements) {
  const Gemm& g = medium();
  {
    std::vector<float> c = g.tiled;
    c[size_t(5 * g.n + 7)] = std::nanf("");
    const ResultCheck check = check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
    EXPECT_FALSE(check.ok);
    EXPECT_NE(check.error.find("C[5][7]"), std::string::npos) << check.error;
  }
  {
    std::vector<float> c = g.tiled;
    c[size_t(255 * g.n + 255)] = -INFINITY;
    EXPECT_FALSE(check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound()).ok);
  }
  {
    std::vector<float> c = g.tiled;
    const uint32_t poison = kPoisonBits;
    std::memcpy(&c[size_t(200 * g.n + 3)], &poison, sizeof poison);
    const ResultCheck check = check_result(c.data(), g.sequential.data(), g.m, g.n, g.n, g.bound());
    EXPECT_FALSE(check.ok);
    EXPECT_NE(check.error.find("never written"), std::string::npos) << check.error;
  }
}

TEST(Verification, honours_the_leading_dimension) {
  // 3 x 2 matrices with ldc = 5: the padding holds garbage that must not be looked at.
  const float nan = std::nanf("");
  const std::vector<float> c = {1, 2, nan, nan, nan, 3, 4, nan, nan, nan, 5, 6, nan};
  const std::vector<double> ref = {1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 6, 0};
  EXPECT_TRUE(check_result(c.data(), ref.data(), 3, 2, 5, 1e-6).ok);
}

TEST(Verification, a_c_without_elements_passes_with_null_pointers) {
  // A grouped call's member with no rows or no columns: nothing to read, nothing to fail.
  const std::vector<float> c = {1, 2};
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{0, 64}, {64, 0}, {0, 0}}) {
    const ResultCheck check = check_result<double>(c.data(), nullptr, m, n, 64, 1e-6);
    EXPECT_TRUE(check.ok) << check.error;
    EXPECT_EQ(check.rel_error, 0);
  }
}

TEST(Verification, finds_writes_outside_the_matrix) {
  // m = 3, n = 2, ldc = 4, C starts at element 1, 3 guard elements after the last row.
  const int64_t offset = 1, m = 3, n = 2, ldc = 4, elements = offset + m * ldc + 3;
  float poison;
  std::memcpy(&poison, &kPoisonBits, sizeof poison);
  std::vector<float> buffer(size_t(elements), poison);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) buffer[size_t(offset + i * ldc + j)] = 1.0f;
  EXPECT_FALSE(find_write_outside(buffer.data(), elements, offset, m, n, ldc));

  auto with_write_at = [&](int64_t e) {
    std::vector<float> b = buffer;
    b[size_t(e)] = 0.0f;
    return find_write_outside(b.data(), elements, offset, m, n, ldc);
  };
  const auto before = with_write_at(0);
  ASSERT_TRUE(before);
  EXPECT_NE(before->find("before C"), std::string::npos) << *before;
  const auto padding = with_write_at(offset + 1 * ldc + 2);
  ASSERT_TRUE(padding);
  EXPECT_NE(padding->find("row 1, column 2"), std::string::npos) << *padding;
  const auto past = with_write_at(elements - 1);
  ASSERT_TRUE(past);
  EXPECT_NE(past->find("past the end"), std::string::npos) << *past;
}

}  // namespace
}  // namespace tgemm

namespace tgemm {
namespace {

// Typed buffers on the host: values round to their type, the poison survives every type, so
// an element a kernel never wrote is caught in f16 and bf16 as in f32.
TEST(HostElements, values_round_to_their_type_and_poison_survives_the_round_trip) {
  float poison;
  std::memcpy(&poison, &kPoisonBits, sizeof poison);
  const std::vector<float> values = {1.0f, 1.0f + 0x1p-12f, 3.140625f, -0.5f, poison};
  for (DType type : {DType::f32, DType::f16, DType::bf16}) {
    const auto bytes = to_bytes(type, values);
    ASSERT_EQ(bytes.size(), values.size() * size_t(element_bytes(type)));
    const auto back = from_bytes(type, bytes);
    for (size_t i = 0; i + 1 < values.size(); ++i)
      EXPECT_EQ(back[i], round_to(type, values[i])) << to_string(type) << " " << i;
    EXPECT_TRUE(is_poison(back.back())) << to_string(type);
  }
  EXPECT_EQ(round_to(DType::f16, 1.0f + 0x1p-12f), 1.0f);            // below f16's half-ulp
  EXPECT_EQ(round_to(DType::bf16, 1.0f + 0x1p-8f), 1.0f);            // ties to even
  EXPECT_EQ(round_to(DType::bf16, 1.0f + 0x1p-7f), 1.0f + 0x1p-7f);  // representable
  EXPECT_EQ(round_to(DType::f32, 1.0f + 0x1p-23f), 1.0f + 0x1p-23f);
}

// FP8 inputs: E4M3 keeps 3 mantissa bits and saturates at 448, E5M2 keeps 2 (to 57344); the
// all-ones byte (a NaN in both) loads as the poison.
TEST(HostElements, fp8_values_round_saturate_and_keep_the_poison) {
  EXPECT_EQ(round_to(DType::e4m3, 1.0f + 0x1p-3f), 1.0f + 0x1p-3f);
  EXPECT_EQ(round_to(DType::e4m3, 1.0f + 0x1p-4f), 1.0f);  // ties to even
  EXPECT_EQ(round_to(DType::e4m3, 1000.0f), 448.0f);
  EXPECT_EQ(round_to(DType::e5m2, 1.0f + 0x1p-3f), 1.0f);
  EXPECT_EQ(round_to(DType::e5m2, 1.0f + 0x1p-2f), 1.25f);
  EXPECT_EQ(round_to(DType::e5m2, -0.3f), -0.3125f);
  for (DType type : {DType::e4m3, DType::e5m2}) {
    const unsigned char poison[4] = {0xFF, 0xFF, 0xFF, 0xFF};  // an FP8 load reads the first
    EXPECT_TRUE(is_poison(load_element(type, poison))) << to_string(type);
  }
}

// FP8's bound: TF32's for the sum plus the output's rounding. On E4M3 inputs (K = 4096) it
// accepts the kernels' sum (each 128-deep slice added by the tensor cores, whose running total
// keeps only 13 mantissa bits after every k32 step, the slices then added in f32), and rejects
// a sum that skips a single k32 step.
TEST(Verification, fp8_bound_accepts_a_coarse_sum_and_rejects_a_missing_k_step) {
  const double bound = relative_error_bound(gemm_types("e4m3", "f32"), 4096);
  EXPECT_DOUBLE_EQ(bound, 8.0 * 0x1p-11);
  EXPECT_DOUBLE_EQ(relative_error_bound(gemm_types("e4m3"), 4096), bound + 2.0 * 0x1p-8);
  constexpr int64_t m = 16, n = 16, k = 4096, step = 32, skipped = 77;
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(size_t(m * k)), b(size_t(k * n));
  for (float& x : a) x = round_to(DType::e4m3, u(rng));
  for (float& x : b) x = round_to(DType::e4m3, u(rng));
  const auto truncated = [](float x) {  // 13 of f32's 23 mantissa bits kept
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    bits &= ~((1u << 10) - 1);
    std::memcpy(&x, &bits, 4);
    return x;
  };
  std::vector<double> exact(size_t(m * n));
  std::vector<float> coarse(exact.size()), dropped(exact.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double e = 0;
      float total = 0, slice = 0, without = 0;
      for (int64_t s = 0; s < k / step; ++s) {
        float part = 0;
        for (int64_t l = s * step; l < (s + 1) * step; ++l) {
          const float p = a[size_t(i * k + l)] * b[size_t(l * n + j)];  // exact in f32
          e += p;
          part += p;
        }
        slice = truncated(slice + part);
        if ((s + 1) % 4 == 0) {  // a 128-deep slice ends: promoted into the f32 sum
          total += slice;
          slice = 0;
        }
        if (s != skipped) without += part;
      }
      exact[size_t(i * n + j)] = e;
      coarse[size_t(i * n + j)] = total;
      dropped[size_t(i * n + j)] = without;
    }
  const ResultCheck ok = check_result(coarse.data(), exact.data(), m, n, n, bound);
  EXPECT_TRUE(ok.ok) << ok.error;
  const ResultCheck bad = check_result(dropped.data(), exact.data(), m, n, n, bound);
  EXPECT_FALSE(bad.ok) << "relative error " << bad.rel_error;
}

}  // namespace
}  // namespace tgemm
