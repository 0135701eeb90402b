// The f32x3 accuracy rule on the host: a 3xTF32 product (big*big + big*small + small*big of
// TF32 parts) stays within f32x3_error_bound of an FP32 SGEMM's error against FP64 at every
// k, while one TF32 pass (big*big only) or two (no small*big) are far outside it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

// Round to TF32 (10 stored mantissa bits), to nearest even, as cvt.rna.tf32.f32 nearly does.
float to_tf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0xFFFu + ((bits >> 13) & 1u);
  bits &= ~0x1FFFu;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// m x n results of alpha * A B + beta * C0 for one random draw: FP64, SGEMM-like FP32, the
// split-TF32 sums with 1, 2 or 3 terms, each summed in f32 like an mma accumulator, and per result
// the sum of its squared terms (what the evaluator's DGEMM on the squared images gives).
struct Products {
  int64_t m, n, k;
  std::vector<double> exact, squares;
  std::vector<float> sgemm, terms1, terms2, terms3;

  // A B alone, one draw per k.
  Products(int64_t m_, int64_t n_, int64_t k_) : Products(m_, n_, k_, uint32_t(k_) * 7 + 1) {}

  Products(int64_t m_, int64_t n_, int64_t k_, uint32_t seed, float alpha = 1.0f, float beta = 0.0f)
      : m(m_), n(n_), k(k_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c0(size_t(m * n), 0.0f);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    if (beta != 0.0f)
      for (auto& x : c0) x = u(rng);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double e = 0, sq = 0;
        float s = 0, t1 = 0, t2 = 0, t3 = 0;
        for (int64_t l = 0; l < k; ++l) {
          const float x = a[size_t(i * k + l)], y = b[size_t(l * n + j)];
          const float xb = to_tf32(x), xs = to_tf32(x - xb);
          const float yb = to_tf32(y), ys = to_tf32(y - yb);
          e += double(x) * double(y);
          sq += double(x) * x * double(y) * y;
          s = std::fma(x, y, s);
          t1 += xb * yb;  // exact products: 11 x 11 significant bits fit in f32
          t2 += xb * ys;
          t2 += xb * yb;
          t3 += xs * yb;  // the small terms first, so the big one does not swamp them
          t3 += xb * ys;
          t3 += xb * yb;
        }
        const float c = c0[size_t(i * n + j)];
        const auto scaled = [&](float sum) { return alpha * sum + beta * c; };
        exact.push_back(double(alpha) * e + double(beta) * c);
        squares.push_back(double(alpha) * alpha * sq + double(beta) * beta * double(c) * c);
        sgemm.push_back(scaled(s));
        terms1.push_back(scaled(t1));
        terms2.push_back(scaled(t2));
        terms3.push_back(scaled(t3));
      }
  }
  double error(const std::vector<float>& c) const {
    return check_result(c.data(), exact.data(), m, n, n, HUGE_VAL).rel_error;
  }
};

TEST(F32x3Bound, is_the_factor_times_sgemms_error_with_the_split_floor) {
  EXPECT_EQ(f32x3_error_bound(1e-5), kF32x3ErrorFactor * 1e-5);
  EXPECT_EQ(f32x3_error_bound(0), kF32x3SplitError);
  EXPECT_EQ(f32x3_error_bound(0x1p-26), kF32x3SplitError);  // small k: SGEMM is nearly exact
  EXPECT_GT(kF32x3ErrorFactor, 1.0);
  EXPECT_LE(kF32x3ErrorFactor, 3.0);  // "small": FP32 accuracy, not a licence
  EXPECT_LT(kF32x3SplitError, 0x1p-20);
}

TEST(F32x3Bound, passes_three_tf32_terms_and_fails_one_or_two_at_every_k) {
  for (int64_t k : {1, 7, 64, 513, 4096}) {
    const Products p(24, 20, k);
    const double sgemm = p.error(p.sgemm), bound = f32x3_error_bound(sgemm);
    SCOPED_TRACE(::testing::Message() << "k = " << k << ", SGEMM's error " << sgemm);
    EXPECT_LE(p.error(p.terms3), bound);
    EXPECT_GT(p.error(p.terms2), 10 * bound);
    EXPECT_GT(p.error(p.terms1), 10 * bound);
    // The evaluator's verdict: the f32 check against FP64 (elements too), then the bound.
    const double f32 = relative_error_bound(GemmTypes{}, k);
    const auto verdict = [&](const std::vector<float>& c) {
      return f32x3_rejection(check_result(c.data(), p.exact.data(), p.m, p.n, p.n, f32), sgemm);
    };
    EXPECT_EQ(verdict(p.terms3), std::nullopt);
    const auto one_pass = verdict(p.terms1);
    ASSERT_TRUE(one_pass);
    EXPECT_NE(one_pass->find("cuBLAS SGEMM's"), std::string::npos) << *one_pass;
    EXPECT_TRUE(verdict(p.terms2));
  }
}

// Seen on the H200 (session 25): six correct pack configs rejected on f32x3 1x7x3 (error 2.91e-7
// against 3x SGEMM's 8.96e-8), fresh inputs each run. On a handful of outputs SGEMM's error is
// one noisy sample; the problem's floor (f32x3_floor: the sums' growth with k, cancellation)
// keeps every correct draw in, and a sum missing a term still out from k = 2 on.
TEST(F32x3Bound, holds_on_a_handful_of_outputs_at_every_k) {
  const int64_t m = 1, n = 7;
  int rejected_by_sgemm_alone = 0;
  for (int64_t k : {1, 2, 3, 7, 64, 1024}) {
    int rejected = 0, two_terms_passed = 0;
    for (uint32_t seed = 0; seed < 2000; ++seed) {
      const Products d(m, n, k, seed * 7919u + uint32_t(k), 1.25f, 0.5f);  // as the GPU tests
      const auto check = [&](const std::vector<float>& c) {
        return check_result(c.data(), d.exact.data(), m, n, n, relative_error_bound({}, k));
      };
      const double sgemm = check(d.sgemm).rel_error;
      const double floor =
          f32x3_floor(k, f32x3_cancellation(d.squares.data(), d.exact.data(), m, n, n));
      rejected += bool(f32x3_rejection(check(d.terms3), sgemm, floor));
      rejected_by_sgemm_alone += bool(f32x3_rejection(check(d.terms3), sgemm));
      two_terms_passed += !f32x3_rejection(check(d.terms2), sgemm, floor);
    }
    EXPECT_EQ(rejected, 0) << "k = " << k;
    if (k >= 2) {
      EXPECT_EQ(two_terms_passed, 0) << "k = " << k;
    }
  }
  EXPECT_GT(rejected_by_sgemm_alone, 100);  // what the floor is for
}

TEST(F32x3Bound, the_floor_grows_with_k_and_cancellation_only) {
  EXPECT_EQ(f32x3_floor(1, 1.0), kF32x3SplitError);
  EXPECT_EQ(f32x3_floor(4, 0.5), kF32x3SplitError);  // cancellation below 1 never tightens it
  EXPECT_DOUBLE_EQ(f32x3_floor(4096, 1.0), kF32x3SumError * 64);
  EXPECT_DOUBLE_EQ(f32x3_floor(4096, 3.0), 3 * kF32x3SumError * 64);
  // A sum missing a TF32 term errs by about 2^-11 of a product: far past the floor at k = 4096.
  EXPECT_LT(f32x3_floor(4096, 1.0), 0x1p-11 / 20);
  const double squares[] = {4.0, 9.0, 0.0, 0.0}, ref[] = {2.0, 0.0, 0.0, 0.0};  // 1 x 2, ldc 2
  EXPECT_DOUBLE_EQ(f32x3_cancellation(squares, ref, 1, 2, 2), std::sqrt(13.0 / 4.0));
}

}  // namespace
}  // namespace tgemm
