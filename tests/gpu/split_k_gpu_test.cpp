// Deterministic split-K on a GPU (sgemm_simt SPLIT_MODE=1): matches the reference through the
// evaluator, gives the same bits run after run, is served by the dispatcher with its
// workspace (and falls back when the workspace cannot be had), and a cubin built against the
// old 72-byte parameter block still runs. Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <tuple>

#include "src/core/device_info.h"
#include "src/dispatch/dispatcher.h"
#include "tests/common/direct_gemm.h"
#include "tuner/evaluate/gemm_evaluator.h"

namespace tgemm {
namespace {

KernelConfig deterministic(int64_t split_k) {
  return testing::sgemm_config({{"BM", 64},
                                {"BN", 64},
                                {"BK", 16},
                                {"TM", 4},
                                {"TN", 4},
                                {"SPLIT_K", split_k},
                                {"SPLIT_MODE", 1}});
}

class SplitKGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = query_device(0).arch;
  }
  std::string arch_;
};

TEST_F(SplitKGpu, deterministic_split_matches_the_cublas_reference_through_the_evaluator) {
  static GemmEvaluator* evaluator = new GemmEvaluator(0);  // never destroyed (see the others)
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      KernelConfig config = deterministic(16);
      config.set("VEC", 1);  // K = 3001 leaves the packed rows only 4-byte aligned
      const CompiledKernel k = testing::compile_f32(config, a, b, arch_);
      ASSERT_TRUE(k.ok) << k.error;
      for (float beta : {0.0f, 0.5f}) {
        Problem p = Problem::packed(GemmTypes{}, a, b, 100, 70, 3001);
        p.beta_zero = beta == 0.0f;
        const CublasTiming prepared =
            evaluator->prepare(p, TimingOptions{0, 1, 1, 1.0, 0.5}, GemmScalars{1.5f, beta}, false);
        ASSERT_TRUE(prepared.ok) << prepared.error;
        const TrialResult r = evaluator->evaluate(config, k.cubin);
        EXPECT_EQ(r.status, TrialStatus::ok) << p.key() << ": " << r.error;
      }
    }
}

// 256 K slices (the deep-K end of sgemm_simt's space), added atomically or through the
// workspace: a ragged huge K, and a K so short that the trailing slices have nothing to add.
TEST_F(SplitKGpu, two_hundred_fifty_six_slices_match_the_reference_with_empty_ones_too) {
  static GemmEvaluator* evaluator = new GemmEvaluator(0);  // never destroyed (see the others)
  for (int64_t mode : {0, 1}) {
    KernelConfig config = deterministic(256);
    config.set("SPLIT_MODE", mode);
    config.set("VEC", 1);  // K = 40001 leaves the packed rows only 4-byte aligned
    const CompiledKernel k = testing::compile_f32(config, Op::N, Op::N, arch_);
    ASSERT_TRUE(k.ok) << k.error;
    for (const auto& [m, n, kk] : {std::tuple<int64_t, int64_t, int64_t>{64, 48, 40001},
                                   {40, 33, 1000}}) {  // 63 slices of 16 for 256 blocks
      Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, m, n, kk);
      p.beta_zero = false;
      const CublasTiming prepared =
          evaluator->prepare(p, TimingOptions{0, 1, 1, 1.0, 0.5}, GemmScalars{1.5f, 0.5f}, false);
      ASSERT_TRUE(prepared.ok) << prepared.error;
      const TrialResult r = evaluator->evaluate(config, k.cubin);
      EXPECT_EQ(r.status, TrialStatus::ok)
          << "SPLIT_MODE " << mode << " " << p.key() << ": " << r.error;
    }
  }
}

TEST_F(SplitKGpu, deterministic_split_is_bitwise_identical_across_runs) {
  const KernelConfig config = deterministic(64);
  const auto g = testing::DirectGemm::make(Op::N, Op::T, 130, 67, 8191, 3, 1, 1.0f, -0.5f, 11);
  std::string why;
  const KernelConfig vec1 = [&] {
    KernelConfig c = config;
    c.set("VEC", 1);  // the offset pointers need scalar loads
    return c;
  }();
  const CompiledKernel k1 = testing::compile_f32(vec1, g.op_a, g.op_b, arch_);
  ASSERT_TRUE(k1.ok) << k1.error;
  const std::vector<float> first = g.run(vec1, k1.cubin, &why, arch_);
  ASSERT_TRUE(why.empty()) << why;
  EXPECT_LT(g.relative_error(first), 1e-5);
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> again = g.run(vec1, k1.cubin, &why, arch_);
    ASSERT_EQ(again.size(), first.size());
    EXPECT_EQ(std::memcmp(again.data(), first.data(), first.size() * 4), 0) << "run " << run;
  }
}

TEST_F(SplitKGpu, dispatcher_serves_a_workspace_plan_and_keeps_the_workspace) {
  Dispatcher d(
      {"/nonexistent/tgemm.db", std::vector<DefaultKernel>{{"*", {}, deterministic(16)}}, false});
  const auto g = testing::DirectGemm::make(Op::N, Op::N, 64, 64, 4096, 0, 0, 1.0f, 0.25f, 12);
  std::vector<float> c;
  DeviceBuffer da(g.a.size() * 4), db(g.b.size() * 4), dc(g.c0.size() * 4);
  TGEMM_CUDA_CHECK(cudaMemcpy(da.get(), g.a.data(), g.a.size() * 4, cudaMemcpyHostToDevice));
  TGEMM_CUDA_CHECK(cudaMemcpy(db.get(), g.b.data(), g.b.size() * 4, cudaMemcpyHostToDevice));
  TGEMM_CUDA_CHECK(cudaMemcpy(dc.get(), g.c0.data(), g.c0.size() * 4, cudaMemcpyHostToDevice));
  const GemmCall call{Op::N,    Op::N, 64,       64,    4096,     g.alpha, g.beta,
                      da.get(), g.lda, db.get(), g.ldb, dc.get(), g.ldc,   {}};
  EXPECT_EQ(d.selection(call), Selection::fallback_default);
  d.gemm(call, nullptr);
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  c.resize(g.c0.size());
  TGEMM_CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_LT(g.relative_error(c), 1e-5);
  EXPECT_GE(d.workspace_bytes(), size_t(16) * 64 * 64 * 4);
}

TEST_F(SplitKGpu, failed_workspace_allocation_is_an_error_or_the_cublas_fallback) {
  Dispatcher d(
      {"/nonexistent/tgemm.db", std::vector<DefaultKernel>{{"*", {}, deterministic(16)}}, false});
  d.set_workspace_allocator(
      {[](void**, size_t) { return cudaErrorMemoryAllocation; }, [](void*) {}});
  const auto g = testing::DirectGemm::make(Op::N, Op::N, 64, 64, 4096, 0, 0, 1.0f, 0.0f, 13);
  DeviceBuffer da(g.a.size() * 4), db(g.b.size() * 4), dc(g.c0.size() * 4);
  TGEMM_CUDA_CHECK(cudaMemcpy(da.get(), g.a.data(), g.a.size() * 4, cudaMemcpyHostToDevice));
  TGEMM_CUDA_CHECK(cudaMemcpy(db.get(), g.b.data(), g.b.size() * 4, cudaMemcpyHostToDevice));
  const GemmCall call{Op::N,    Op::N, 64,       64,    4096,     g.alpha, g.beta,
                      da.get(), g.lda, db.get(), g.ldb, dc.get(), g.ldc,   {}};
  EXPECT_THROW(d.gemm(call, nullptr), ExecutionError);
  d.set_cublas_fallback(true);
  d.gemm(call, nullptr);
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> c(g.c0.size());
  TGEMM_CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_LT(g.relative_error(c), 1e-5);
}

// A cubin whose kernels declare the 72-byte block (no workspace field), as stored in older
// databases, launched with today's 80-byte block.
TEST_F(SplitKGpu, cubin_built_against_the_72_byte_block_still_runs) {
  KernelSource old = template_named("sgemm_simt").source();
  bool edited = false;
  for (NamedHeader& h : old.headers) {
    if (h.include_name != "common/gemm_params.h") continue;
    const std::string field = "  void* workspace;";
    const size_t at = h.text.find(field);
    ASSERT_NE(at, std::string::npos);
    h.text.erase(at, h.text.find('\n', at) - at);
    edited = true;
  }
  ASSERT_TRUE(edited);
  old.hash += "-72";
  auto family = make_template("sgemm_simt", old);
  const KernelConfig config = testing::sgemm_config({{"VEC", 1}, {"SPLIT_K", 4}});
  const CompiledKernel k =
      build_kernel(*family, config, Problem::packed(GemmTypes{}, Op::N, Op::N, 1, 1, 1), arch_);
  ASSERT_TRUE(k.ok) << k.error;
  const auto g = testing::DirectGemm::make(Op::N, Op::N, 77, 65, 300, 1, 1, 2.0f, 0.5f, 14);
  std::string why;
  const std::vector<float> c = g.run(config, k.cubin, &why, arch_);
  ASSERT_TRUE(why.empty()) << why;
  EXPECT_LT(g.relative_error(c), 1e-5);
}

}  // namespace
}  // namespace tgemm
