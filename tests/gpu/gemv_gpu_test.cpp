// gemv_simt on a GPU: both small sides in every layout, M or N = 1..8, odd K, misaligned
// leading dimensions and pointers (VEC=1), beta != 0, atomic and deterministic K slices,
// against a double-precision host reference. Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "tests/common/direct_gemm.h"
#include "tests/common/gemv_configs.h"

namespace tgemm {
namespace {

constexpr auto gemv = testing::gemv_config;

class GemvGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
  }

  // Every case on `config` in every layout. A case is refused only for the alignment its VEC
  // needs (an odd leading dimension of the large operand), and each layout runs some cases.
  // A config with KLANES != 32 (STAGES != 0) is refused whole, and not built, in the layouts
  // whose large operand runs along L (along K), as that loop ignores it; the others run it.
  void expect_correct(const KernelConfig& config, const std::vector<testing::DirectGemm>& cases) {
    int layouts_ran = 0;
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) {
        int ran = 0;
        const bool along_k = config.get("SIDE") == 0 ? b == Op::T : a == Op::N;
        if (along_k ? config.get_or("STAGES", 0) != 0 : config.get_or("KLANES", 32) != 32) {
          const bool small_m = config.get("SIDE") == 0;  // aligned: no other refusal first
          const Problem p =
              Problem::packed(GemmTypes{}, a, b, small_m ? 1 : 1024, small_m ? 1024 : 1, 1024);
          const auto why = template_named("gemv_simt").unsupported_reason(config, p, arch_);
          ASSERT_TRUE(why.has_value()) << config.canonical_name();
          EXPECT_NE(why->find("builds the same kernel"), std::string::npos) << *why;
          continue;
        }
        const CompiledKernel k = testing::compile_f32(config, a, b, arch_);
        ASSERT_TRUE(k.ok) << config.canonical_name() << "\n" << k.error;
        for (testing::DirectGemm g : cases) {
          g = testing::DirectGemm::make(a, b, g.m, g.n, g.k, g.ldc - g.n, g.offset, g.alpha, g.beta,
                                        uint32_t(g.m * 131 + g.n * 7 + g.k));
          std::string why;
          const std::vector<float> c = g.run(config, k.cubin, &why, arch_);
          const std::string what =
              fmt::format("{} {}{} {}x{}x{} ld pad {} offset {} beta {}", config.canonical_name(),
                          to_string(a), to_string(b), g.m, g.n, g.k, g.ldc - g.n, g.offset, g.beta);
          if (!why.empty()) {
            EXPECT_NE(why.find("aligned to"), std::string::npos) << what << ": " << why;
            EXPECT_GT(config.get("VEC"), 1) << what << ": " << why;
            continue;
          }
          ++ran;
          EXPECT_LT(g.relative_error(c), 1e-5) << what;
        }
        EXPECT_GT(ran, 0) << config.canonical_name() << " " << to_string(a) << to_string(b);
        layouts_ran += ran > 0;
      }
    EXPECT_GE(layouts_ran, 2) << config.canonical_name();
  }

  std::string arch_;
};

// Shapes of one small side `s` (1..8) with a long side and odd K, and one with K = 1024 so that
// every layout (the large operand k-contiguous too) runs the vector loads.
std::vector<testing::DirectGemm> cases(bool small_m, int pad, int offset) {
  std::vector<testing::DirectGemm> out;
  for (int s : {1, 2, 3, 5, 8})
    for (auto [l, k, beta] :
         {std::tuple{1000, 777, 0.0f}, std::tuple{129, 2049, 0.5f}, std::tuple{37, 1, -1.0f},
          std::tuple{1000, 1024, 0.5f}}) {  // the last: a K-contiguous operand VEC can load
      testing::DirectGemm g;
      g.m = small_m ? s : l;
      g.n = small_m ? l : s;
      g.k = k;
      g.ldc = g.n + pad;
      g.offset = offset;
      g.alpha = 1.25f;
      g.beta = beta;
      out.push_back(g);
    }
  return out;
}

TEST_F(GemvGpu, small_m_every_layout_deterministic_and_atomic) {
  expect_correct(gemv(0, 8, 4, 8, 256, 1, 1), cases(true, 0, 0));
  expect_correct(gemv(0, 8, 2, 4, 128, 2, 0), cases(true, 0, 0));
}

TEST_F(GemvGpu, small_n_every_layout_deterministic_and_atomic) {
  expect_correct(gemv(1, 8, 4, 8, 256, 1, 1), cases(false, 0, 0));
  expect_correct(gemv(1, 8, 2, 4, 128, 2, 0), cases(false, 0, 0));
}

TEST_F(GemvGpu, misaligned_leading_dimensions_and_pointers_with_vec1) {
  expect_correct(gemv(0, 8, 1, 8, 512, 2, 1), cases(true, 1, 1));
  expect_correct(gemv(1, 8, 1, 4, 128, 1, 0), cases(false, 3, 1));
}

// `config` with parameter `name` set to `value`.
KernelConfig with(const char* name, KernelConfig config, int64_t value) {
  config.set(name, value);
  return config;
}

// cases() with 8 more on the small side: 9..16.
std::vector<testing::DirectGemm> sixteen(bool small_m, int pad = 0, int offset = 0) {
  std::vector<testing::DirectGemm> out = cases(small_m, pad, offset);
  for (auto& g : out) {
    if (small_m) {
      g.m += 8;
    } else {
      g.n += 8;
      g.ldc += 8;
    }
  }
  return out;
}

TEST_F(GemvGpu, rows_16_serves_sixteen_rows) {
  expect_correct(gemv(0, 16, 4, 8, 512, 1, 1), sixteen(true));
  expect_correct(gemv(1, 16, 4, 8, 512, 1, 1), sixteen(false));
}

// Several rows of X per warp (KLANES lanes each), LW of them per lane group, each K-slice mode;
// rows past L, K tails and misaligned rows (VEC=1) included.
TEST_F(GemvGpu, lane_groups_along_k_every_split_mode) {
  expect_correct(with("KLANES", gemv(0, 16, 4, 8, 512, 2, 1), 8), sixteen(true));
  expect_correct(with("KLANES", gemv(1, 16, 4, 4, 256, 4, 2), 8), sixteen(false));
  expect_correct(with("KLANES", gemv(0, 8, 2, 8, 128, 1, 0), 4), cases(true, 0, 0));
  expect_correct(with("KLANES", gemv(1, 8, 4, 8, 512, 2, 2), 16), cases(false, 0, 0));
  expect_correct(with("KLANES", gemv(0, 8, 1, 4, 256, 4, 1), 4), cases(true, 1, 1));
}

// W stored along S on the loop along K with 16 rows (N = 9..16 NN, M = 9..16 TT) is staged in its
// stored order: 16-byte copies where its rows and pointer are 16-byte aligned (N = 12, 16),
// element copies where not (the other N, padded and offset operands), in each K-slice mode.
TEST_F(GemvGpu, w_stored_along_s_in_its_stored_order_aligned_or_not) {
  expect_correct(with("KLANES", gemv(1, 16, 4, 8, 512, 4, 1), 8), sixteen(false));
  expect_correct(with("KLANES", gemv(1, 16, 1, 4, 256, 2, 0), 8), sixteen(false, 1, 1));
  expect_correct(with("KLANES", gemv(0, 16, 1, 8, 128, 2, 2), 16), sixteen(true, 3, 1));
}

// Atomic K slices along L (SIDE=0, SPLIT_MODE=0): on sm_90 four columns of C go out as one
// 16-byte atomic where all four are in range and C is aligned there, one by one elsewhere: N
// past a multiple of 4 (1000, 129, 37), rows of a padded C (ldc = N + 1, N + 2) and an offset C.
TEST_F(GemvGpu, atomic_slices_along_l_in_vectors_and_elements) {
  expect_correct(gemv(0, 16, 4, 8, 256, 1, 0), sixteen(true));
  expect_correct(gemv(0, 8, 4, 4, 128, 1, 0), cases(true, 0, 0));
  expect_correct(gemv(0, 8, 1, 8, 128, 2, 0), cases(true, 1, 1));
  expect_correct(gemv(0, 8, 1, 4, 256, 1, 0), cases(true, 2, 0));
}

// The cp.async ring along L (sm_80+): 2..4 slots per warp, vector and element-wise copies
// (VEC=1 on misaligned rows), K tails and L edges zero-filled, each K-slice mode.
TEST_F(GemvGpu, ring_along_l_every_split_mode) {
  if (arch_ == "sm_75") GTEST_SKIP() << "sm_75 has no cp.async";
  expect_correct(with("STAGES", gemv(0, 16, 4, 8, 512, 1, 2), 4), sixteen(true));
  expect_correct(with("STAGES", gemv(1, 16, 4, 4, 128, 1, 1), 2), sixteen(false));
  expect_correct(with("STAGES", gemv(0, 8, 4, 8, 128, 2, 0), 3), cases(true, 0, 0));
  expect_correct(with("STAGES", gemv(1, 8, 2, 8, 256, 2, 2), 3), cases(false, 0, 0));
  expect_correct(with("STAGES", gemv(0, 8, 1, 4, 256, 4, 1), 2), cases(true, 1, 1));
}

// A strip's K slices met in one cluster's shared memory (SPLIT_MODE=3, sm_90): along L with
// registers and with the ring, along K with lane groups, misaligned rows (VEC=1, W staged by
// 4-byte copies); K from 1 (one real slice of the cluster's blocks) to 2049.
TEST_F(GemvGpu, cluster_of_k_slices_every_layout) {
  if (arch_number(arch_) < 90) GTEST_SKIP() << "thread block clusters need sm_90";
  auto cluster = [](KernelConfig c, int64_t size) {
    c.set("SPLIT_MODE", 3);
    c.set("CLUSTER", size);
    return c;
  };
  expect_correct(cluster(gemv(0, 16, 4, 8, 512, 1, 3), 8), sixteen(true));
  expect_correct(cluster(with("STAGES", gemv(0, 16, 4, 4, 512, 1, 3), 3), 8), sixteen(true));
  expect_correct(cluster(with("KLANES", gemv(1, 16, 4, 8, 512, 2, 3), 8), 8), sixteen(false));
  expect_correct(cluster(gemv(1, 8, 1, 4, 1024, 1, 3), 4), cases(false, 3, 1));
  expect_correct(cluster(gemv(0, 8, 1, 8, 1024, 2, 3), 4), cases(true, 1, 1));
}

}  // namespace
}  // namespace tgemm
