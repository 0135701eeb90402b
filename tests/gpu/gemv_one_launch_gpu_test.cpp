// gemv_simt SPLIT_MODE=2 on a GPU: K slices meet in one launch (the strip's last block to
// arrive reduces). Against a double-precision host reference and bitwise against SPLIT_MODE=1,
// with NaN in C for beta == 0, K not a multiple of KB, several calls on one loaded kernel (the
// arrival counters reset), and a workspace full of garbage (the counters do not live there);
// through the dispatcher, calls on two streams at once take turns. Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/dispatch/dispatcher.h"
#include "tests/common/direct_gemm.h"
#include "tests/common/gemv_configs.h"

namespace tgemm {
namespace {

constexpr auto gemv = testing::gemv_config;

// `config` in SPLIT_MODE `mode`, CLUSTER 1 unless the mode is 3 (which keeps config's).
KernelConfig with_mode(KernelConfig config, int64_t mode) {
  config.set("SPLIT_MODE", mode);
  if (mode != 3) config.set("CLUSTER", 1);
  return config;
}

// ||x - y|| / ||y||, infinite for a NaN or an infinity in x.
double relative_difference(const std::vector<float>& x, const std::vector<float>& y) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) return INFINITY;
    diff += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    norm += double(y[i]) * y[i];
  }
  return std::sqrt(diff / norm);
}

// Waits for `stream`; a block left waiting on a counter would hang the suite (and every later
// CUDA call with it), so past 60 s this says what hung and ends the process.
void finish_or_exit(cudaStream_t stream, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  cudaError_t err;
  while ((err = cudaStreamQuery(stream)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "%s: the calls on two streams did not finish in 60 s (a hang)\n",
                   what.c_str());
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  TGEMM_CUDA_CHECK(err);
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

class GemvOneLaunchGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
  }

  // `calls` runs of g through one loaded kernel and one workspace filled with 0xFF bytes, C
  // uploaded before each (all NaN when beta == 0: a read or unwritten C shows); each call's C.
  // Empty when the family refuses the problem (*why says why).
  std::vector<std::vector<float>> run_calls(const KernelConfig& config,
                                            const std::vector<char>& cubin,
                                            const testing::DirectGemm& g, int calls,
                                            std::string* why) const {
    const GemmTemplate& family = template_named(config.template_name);
    DeviceBuffer da(g.a.size() * 4), db(g.b.size() * 4), dc(g.c0.size() * 4);
    const Problem p = g.problem(da.get(), db.get(), dc.get());
    if (auto reason = family.unsupported_reason(config, p, arch_)) {
      *why = *reason;
      return {};
    }
    TGEMM_CUDA_CHECK(cudaMemcpy(da.get(), g.a.data(), g.a.size() * 4, cudaMemcpyHostToDevice));
    TGEMM_CUDA_CHECK(cudaMemcpy(db.get(), g.b.data(), g.b.size() * 4, cudaMemcpyHostToDevice));
    GemmKernel kernel(config, cubin, family.entries(config),
                      family.block_resources(config).dynamic_smem_bytes);
    const LaunchPlan plan = family.plan_launch(config, p);
    DeviceBuffer workspace(std::max<size_t>(plan.workspace_bytes, 4));
    TGEMM_CUDA_CHECK(cudaMemset(workspace.get(), 0xFF, workspace.bytes()));
    const std::vector<float> c_init =
        g.beta == 0.0f ? std::vector<float>(g.c0.size(), std::numeric_limits<float>::quiet_NaN())
                       : g.c0;
    std::vector<std::vector<float>> out;
    for (int call = 0; call < calls; ++call) {
      TGEMM_CUDA_CHECK(
          cudaMemcpy(dc.get(), c_init.data(), c_init.size() * 4, cudaMemcpyHostToDevice));
      TGEMM_CUDA_CHECK(kernel.launch(plan,
                                     make_params(p, da.get(), db.get(), dc.get(), g.alpha, g.beta),
                                     workspace.get(), nullptr));
      TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
      out.emplace_back(g.c0.size());
      TGEMM_CUDA_CHECK(
          cudaMemcpy(out.back().data(), dc.get(), out.back().size() * 4, cudaMemcpyDeviceToHost));
    }
    return out;
  }

  // Every (small, long, K, beta) case in every layout: two calls of SPLIT_MODE=2 each within the
  // reference's bound and bitwise equal to each other and to one call of SPLIT_MODE=1.
  void expect_correct(const KernelConfig& config, bool small_m,
                      const std::vector<std::tuple<int, int, int, float>>& cases) {
    const KernelConfig reduce_pass = with_mode(config, 1);
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) {
        const CompiledKernel k = testing::compile_f32(config, a, b, arch_);
        const CompiledKernel k1 = testing::compile_f32(reduce_pass, a, b, arch_);
        ASSERT_TRUE(k.ok && k1.ok) << config.canonical_name() << "\n" << k.error << k1.error;
        int ran = 0;
        for (auto [s, l, kk, beta] : cases) {
          const int m = small_m ? s : l, n = small_m ? l : s;
          const auto g = testing::DirectGemm::make(a, b, m, n, kk, 0, 0, 1.25f, beta,
                                                   uint32_t(m * 131 + n * 7 + kk));
          const std::string what = fmt::format("{} {}{} {}x{}x{} beta {}", config.canonical_name(),
                                               to_string(a), to_string(b), m, n, kk, beta);
          std::string why;
          const auto twice = run_calls(config, k.cubin, g, 2, &why);
          if (!why.empty()) {
            EXPECT_NE(why.find("aligned to"), std::string::npos) << what << ": " << why;
            continue;
          }
          ++ran;
          EXPECT_LT(g.relative_error(twice[0]), 1e-5) << what << " (first call)";
          EXPECT_TRUE(same_bits(twice[0], twice[1])) << what << ": the second call differs";
          const auto one_pass = run_calls(reduce_pass, k1.cubin, g, 1, &why);
          ASSERT_EQ(one_pass.size(), 1u) << what << ": " << why;
          EXPECT_TRUE(same_bits(twice[0], one_pass[0])) << what << ": differs from SPLIT_MODE=1";
        }
        EXPECT_GT(ran, 0) << config.canonical_name() << " " << to_string(a) << to_string(b);
      }
  }

  std::string arch_;
};

// Small sides 1, 4 and 16 (up to ROWS); K = 1000 and 2056 are no multiple of KB, K = 100 is one
// slice (C written directly); beta 0 (C all NaN) and 0.5. Small enough for the host reference
// (the first version, with 16 x 4096 x 2056, ran past 30 s on the H200's host).
std::vector<std::tuple<int, int, int, float>> cases(int rows) {
  std::vector<std::tuple<int, int, int, float>> out;
  for (int s : {1, 4, 16})
    if (s <= rows)
      for (auto [l, k, beta] : {std::tuple{1000, 1000, 0.0f}, std::tuple{1024, 2056, 0.5f},
                                std::tuple{36, 1000, 0.5f}, std::tuple{1000, 100, 0.0f}})
        out.emplace_back(s, l, k, beta);
  return out;
}

TEST_F(GemvOneLaunchGpu, small_m_matches_reference_and_split_mode_1_bitwise) {
  expect_correct(gemv(0, 16, 4, 8, 128, 1, 2), true, cases(16));
  expect_correct(gemv(0, 4, 2, 4, 256, 2, 2), true, cases(4));
}

TEST_F(GemvOneLaunchGpu, small_n_matches_reference_and_split_mode_1_bitwise) {
  expect_correct(gemv(1, 16, 4, 8, 128, 1, 2), false, cases(16));
  expect_correct(gemv(1, 4, 2, 4, 256, 2, 2), false, cases(4));
}

// SPLIT_MODE=3 (sm_90): the slices meet in one cluster's shared memory, two to eight of its
// eight blocks real for these K (100 leaves one), bitwise SPLIT_MODE 1's sums.
TEST_F(GemvOneLaunchGpu, cluster_of_slices_matches_reference_and_split_mode_1_bitwise) {
  if (arch_number(arch_) < 90) GTEST_SKIP() << "thread block clusters need sm_90";
  KernelConfig along_l = gemv(0, 16, 4, 8, 512, 1, 3), small_n = gemv(1, 4, 2, 4, 512, 2, 3);
  along_l.set("CLUSTER", 8);
  small_n.set("CLUSTER", 8);
  expect_correct(along_l, true, cases(16));
  expect_correct(small_n, false, cases(4));
}

TEST_F(GemvOneLaunchGpu, beta_zero_never_reads_c_full_of_nan) {
  const KernelConfig config = gemv(0, 1, 4, 8, 128, 2, 2);
  const auto g = testing::DirectGemm::make(Op::N, Op::N, 1, 4096, 4096, 0, 0, 1.0f, 0.0f, 7);
  const CompiledKernel k = testing::compile_f32(config, Op::N, Op::N, arch_);
  ASSERT_TRUE(k.ok) << k.error;
  std::string why;
  const auto c = run_calls(config, k.cubin, g, 1, &why);
  ASSERT_EQ(c.size(), 1u) << why;
  EXPECT_LT(g.relative_error(c[0]), 1e-5);  // infinite for any NaN left in C
}

// Many strips and slices (32 x 512 blocks for B^T), five calls on one loaded kernel: a count
// left behind by one call would make a later call reduce early or never.
TEST_F(GemvOneLaunchGpu, every_call_finds_the_arrival_counters_reset) {
  const KernelConfig config = gemv(0, 16, 4, 4, 128, 1, 2);
  const auto g = testing::DirectGemm::make(Op::N, Op::T, 16, 2048, 4096, 0, 0, 0.75f, 0.0f, 11);
  const CompiledKernel k = testing::compile_f32(config, Op::N, Op::T, arch_);
  ASSERT_TRUE(k.ok) << k.error;
  std::string why;
  const auto calls = run_calls(config, k.cubin, g, 5, &why);
  ASSERT_EQ(calls.size(), 5u) << why;
  EXPECT_LT(g.relative_error(calls[0]), 1e-5);
  for (size_t i = 1; i < calls.size(); ++i)
    EXPECT_TRUE(same_bits(calls[0], calls[i])) << "call " << i << " differs from the first";
}

// Atomic slices (SPLIT_MODE=0) in one launch, five calls on one loaded kernel, along L (NN) and
// along K (NT): each strip's first slice scales C (all NaN for beta == 0) before any slice adds
// into it, and its ready flag is back to zero for the next call.
TEST_F(GemvOneLaunchGpu, atomic_slices_scale_c_first_in_every_call) {
  const KernelConfig config = with_mode(gemv(0, 16, 4, 4, 128, 1, 2), 0);
  for (Op b : {Op::N, Op::T})
    for (float beta : {0.0f, 0.5f}) {
      const auto g = testing::DirectGemm::make(Op::N, b, 16, 2048, 4096, 0, 0, 0.75f, beta, 13);
      const CompiledKernel k = testing::compile_f32(config, Op::N, b, arch_);
      ASSERT_TRUE(k.ok) << k.error;
      std::string why;
      const auto calls = run_calls(config, k.cubin, g, 5, &why);
      ASSERT_EQ(calls.size(), 5u) << why;
      for (size_t i = 0; i < calls.size(); ++i)
        EXPECT_LT(g.relative_error(calls[i]), 1e-5)
            << "N" << to_string(b) << " beta " << beta << " call " << i;
    }
}

// The counting modes keep per-strip counters in the loaded kernel's module (atomic slices, 0;
// the last block's reduction, 2, also the dispatcher's workspace): twelve calls queued on two
// streams with no host wait between them, each into its own C. Run at once, two calls would
// count each other's arrivals (a wrong sum, or a strip that waits forever); the dispatcher puts
// them in turn, so every C is right.
TEST_F(GemvOneLaunchGpu, dispatcher_calls_on_two_streams_take_turns) {
  constexpr int kCalls = 12;
  const auto g = testing::DirectGemm::make(Op::N, Op::T, 16, 2048, 4096, 0, 0, 0.75f, 0.5f, 17);
  DeviceBuffer da(g.a.size() * 4), db(g.b.size() * 4);
  TGEMM_CUDA_CHECK(cudaMemcpy(da.get(), g.a.data(), g.a.size() * 4, cudaMemcpyHostToDevice));
  TGEMM_CUDA_CHECK(cudaMemcpy(db.get(), g.b.data(), g.b.size() * 4, cudaMemcpyHostToDevice));
  cudaStream_t streams[2];
  for (cudaStream_t& s : streams)
    TGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int64_t mode : {0, 2}) {
    const KernelConfig config = with_mode(gemv(0, 16, 4, 4, 128, 1, 2), mode);
    Dispatcher d({"/nonexistent/tgemm.db", std::vector<DefaultKernel>{{"*", {}, config}}, false});
    std::vector<DeviceBuffer> cs;
    for (int i = 0; i < kCalls; ++i) {
      cs.emplace_back(g.c0.size() * 4);
      TGEMM_CUDA_CHECK(
          cudaMemcpy(cs.back().get(), g.c0.data(), g.c0.size() * 4, cudaMemcpyHostToDevice));
    }
    for (int i = 0; i < kCalls; ++i) {
      const GemmCall call{Op::N,    Op::T, 16,       2048,  4096,        g.alpha, g.beta,
                          da.get(), g.lda, db.get(), g.ldb, cs[i].get(), g.ldc,   {}};
      const ServedBy served = d.served_by(call);
      ASSERT_TRUE(served.kernel.has_value()) << "SPLIT_MODE " << mode << " is served cuBLAS";
      ASSERT_EQ(served.kernel->canonical_name(), config.canonical_name());
      d.gemm(call, streams[i % 2]);
    }
    for (cudaStream_t s : streams) finish_or_exit(s, "SPLIT_MODE " + std::to_string(mode));
    // The host reference once (it is the slow part), then every call against the first.
    std::vector<std::vector<float>> c(kCalls, std::vector<float>(g.c0.size()));
    for (int i = 0; i < kCalls; ++i)
      TGEMM_CUDA_CHECK(
          cudaMemcpy(c[i].data(), cs[i].get(), c[i].size() * 4, cudaMemcpyDeviceToHost));
    EXPECT_LT(g.relative_error(c[0]), 1e-5) << "SPLIT_MODE " << mode << " call 0";
    for (int i = 1; i < kCalls; ++i)
      EXPECT_LT(relative_difference(c[i], c[0]), 1e-6) << "SPLIT_MODE " << mode << " call " << i;
  }
  for (cudaStream_t s : streams) TGEMM_CUDA_CHECK(cudaStreamDestroy(s));
}

}  // namespace
}  // namespace tgemm
