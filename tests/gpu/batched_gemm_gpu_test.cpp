// Batched GEMM on a GPU: every family that serves batches computes a strided batch and a
// pointer-array batch as cuBLAS's batched calls do (batch 1 and more, beta != 0), through the
// dispatcher with the family forced; a captured batched call replays its eager result; and the
// C API's batched call matches cuBLAS; the tuner's evaluator checks every member. Skips
// without a GPU.
#include <gtest/gtest.h>
#include <tgemm/tgemm_c.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/gpu_family_configs.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {
namespace {

// One family's config forced for a type, the arch it needs, and whether it reads any
// element-aligned pointer (pointer arrays assume no more).
struct Family {
  const char* types;
  KernelConfig config;
  int min_arch;
  bool any_alignment;
};

std::vector<Family> families() {
  using namespace testing;
  return {{"f32", simt_gpu_config(), 75, true},   {"f32", warp_gpu_config(), 80, true},
          {"f16", mma_gpu_config(), 75, true},    {"bf16", mma_gpu_config(), 80, true},
          {"f16", wgmma_gpu_config(), 90, false}, {"bf16", wgmma_gpu_config(), 90, false},
          {"f16", naive_gpu_config(), 75, true}};
}

// The tuner's view: a batch is verified against cuBLAS's strided-batched call on every member
// and timed with that call as its peer; a kernel built for one GEMM (the single form) writes
// member 0 only and is caught.
TEST(BatchedEvaluatorGpu, a_batch_is_verified_on_every_member_and_timed_against_cublas) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  GemmEvaluator evaluator(0);
  const Family f = families()[0];
  const Problem p = Problem::packed_batch(GemmTypes{}, Op::N, Op::T, 96, 80, 48, 6);
  const CublasTiming cublas =
      evaluator.prepare(p, TimingOptions{0, 3, 3, 10.0, 0.5}, GemmScalars{1.0f, 0.0f}, true);
  ASSERT_TRUE(cublas.ok) << cublas.error;
  EXPECT_GT(cublas.median_us, 0);
  const GemmTemplate& family = template_named(f.config.template_name);
  const CompiledKernel batched =
      build_kernel(family, f.config, build_variant(p), query_device(0).arch);
  ASSERT_TRUE(batched.ok) << batched.error;
  const TrialResult ok = evaluator.evaluate(f.config, batched.cubin);
  EXPECT_EQ(ok.status, TrialStatus::ok) << ok.error;
  const CompiledKernel single = build_kernel(
      family, f.config, Problem::packed(GemmTypes{}, Op::N, Op::T, 1, 1, 1), query_device(0).arch);
  ASSERT_TRUE(single.ok) << single.error;
  EXPECT_EQ(evaluator.evaluate(f.config, single.cubin).status, TrialStatus::wrong_result);
}

// With the vendor calls as contenders, a batch's is cuBLAS's batched call itself (cuBLASLt's
// descriptors describe no batch), verified and timed: a tuned batch can be served by it.
TEST(BatchedEvaluatorGpu, cublas_batched_call_is_a_batchs_vendor_contender) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  GemmEvaluator evaluator(0);
  const Problem p = Problem::packed_batch(parse_gemm_types("bf16"), Op::N, Op::T, 128, 128, 64, 8);
  const CublasTiming cublas =
      evaluator.prepare(p, TimingOptions{0, 3, 3, 10.0, 0.5}, GemmScalars{1.0f, 0.0f}, true, true);
  ASSERT_TRUE(cublas.ok) << cublas.error;
  ASSERT_EQ(cublas.vendor_trials.size(), 1u);
  const TrialResult& contender = cublas.vendor_trials[0];
  EXPECT_EQ(contender.config, cublas_default_call());
  EXPECT_EQ(contender.status, TrialStatus::ok) << contender.error;
  EXPECT_GT(contender.time_median_us, 0);
}

// A strided batch of `batch` members in device memory, with its cuBLAS reference (pedantic FP32
// into an f32 C) computed from the same C.
struct Batch {
  GemmTypes types;
  Op op_a, op_b;
  int m, n, k, batch;
  long long stride_a, stride_b, stride_c;
  DeviceBuffer a, b, c, c0, ref;
  std::vector<float> host_c0;

  Batch(GemmTypes t, Op oa, Op ob, int m_, int n_, int k_, int batch_, uint32_t seed)
      : types(t), op_a(oa), op_b(ob), m(m_), n(n_), k(k_), batch(batch_) {
    stride_a = (long long)m * k + 8;  // not packed: members apart by more than one matrix
    stride_b = (long long)k * n;
    stride_c = (long long)m * n + 16;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    const auto upload = [&](DType type, long long elements, std::vector<float>* keep) {
      std::vector<float> values(static_cast<size_t>(elements));
      for (float& x : values) x = round_to(type, dist(rng));
      const std::vector<unsigned char> bytes = to_bytes(type, values);
      DeviceBuffer buffer(bytes.size());
      TGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), bytes.data(), bytes.size(), cudaMemcpyDefault));
      if (keep) *keep = values;
      return buffer;
    };
    a = upload(t.a, stride_a * batch, nullptr);
    b = upload(t.b, stride_b * batch, nullptr);
    c0 = upload(t.c, stride_c * batch, &host_c0);
    c = DeviceBuffer(c0.bytes());
    ref = DeviceBuffer(size_t(stride_c * batch) * sizeof(float));
  }

  GemmCall call(float alpha, float beta) const {
    GemmCall x{op_a,
               op_b,
               m,
               n,
               k,
               alpha,
               beta,
               a.get(),
               op_a == Op::N ? k : m,
               b.get(),
               op_b == Op::N ? n : k,
               c.get(),
               n,
               types};
    x.batch = batch;
    x.stride_a = stride_a;
    x.stride_b = stride_b;
    x.stride_c = stride_c;
    return x;
  }

  void reset_c() const {
    TGEMM_CUDA_CHECK(cudaMemcpy(c.get(), c0.get(), c0.bytes(), cudaMemcpyDeviceToDevice));
  }

  // ||C - ref|| / ||ref|| over every member, C as the last call left it.
  double error_against_cublas(const GemmCall& done) const {
    GemmCall r = done;
    r.c = ref.get();
    r.batch_pointers = false;
    r.a = a.get();
    r.b = b.get();
    r.stride_a = stride_a;
    r.stride_b = stride_b;
    r.stride_c = stride_c;
    TGEMM_CUDA_CHECK(cudaMemcpy(ref.get(), host_c0.data(), ref.bytes(), cudaMemcpyDefault));
    cublasHandle_t handle = nullptr;
    EXPECT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(row_major_gemm(handle, r, CublasMath::reference, DType::f32), CUBLAS_STATUS_SUCCESS);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    cublasDestroy(handle);
    std::vector<unsigned char> bytes(c.bytes());
    TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), c.get(), bytes.size(), cudaMemcpyDefault));
    const std::vector<float> got = from_bytes(types.c, bytes);
    std::vector<float> want(size_t(stride_c * batch));
    TGEMM_CUDA_CHECK(cudaMemcpy(want.data(), ref.get(), ref.bytes(), cudaMemcpyDefault));
    double err = 0, norm = 0;
    for (int z = 0; z < batch; ++z)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          const size_t at = size_t(z * stride_c + (long long)i * n + j);
          if (!std::isfinite(got[at])) return INFINITY;
          err += (got[at] - want[at]) * double(got[at] - want[at]);
          norm += double(want[at]) * want[at];
        }
    // The gap between members is never written.
    for (int z = 0; z < batch; ++z)
      for (long long e = (long long)m * n; e < stride_c; ++e)
        if (got[size_t(z * stride_c + e)] != host_c0[size_t(z * stride_c + e)]) return INFINITY;
    return std::sqrt(err / norm);
  }
};

double bound(const GemmTypes& t) { return t.a == DType::f32 ? 1e-5 : 1e-2; }

class BatchedGemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = arch_number(query_device(0).arch);
  }
  static std::unique_ptr<Dispatcher> forced(const Family& family) {
    return testing::forced_dispatcher(family.types, family.config);
  }
  int arch_ = 0;
};

TEST_F(BatchedGemmGpu, every_batched_family_matches_cublas_strided_batched) {
  for (const Family& f : families()) {
    if (arch_ < f.min_arch) continue;
    SCOPED_TRACE(f.config.canonical_name() + " " + f.types);
    auto d = forced(f);
    for (int batch : {1, 7}) {
      for (Op op_b : {Op::N, Op::T}) {
        Batch x(parse_gemm_types(f.types), Op::N, op_b, 129, 72, 64, batch, uint32_t(batch));
        x.reset_c();
        const GemmCall call = x.call(1.5f, 0.5f);
        const ServedBy served = d->served_by(call);
        ASSERT_TRUE(served.kernel) << to_string(served.path);
        EXPECT_EQ(served.kernel->template_name, f.config.template_name);
        d->gemm(call, nullptr);
        TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
        EXPECT_LT(x.error_against_cublas(call), bound(x.types)) << "batch " << batch;
      }
    }
  }
}

TEST_F(BatchedGemmGpu, every_batched_family_reads_pointer_arrays_as_cublas_gemm_batched) {
  for (const Family& f : families()) {
    if (arch_ < f.min_arch || !f.any_alignment) continue;
    SCOPED_TRACE(f.config.canonical_name() + " " + f.types);
    auto d = forced(f);
    for (int batch : {1, 5}) {
      Batch x(parse_gemm_types(f.types), Op::T, Op::N, 96, 130, 40, batch, uint32_t(10 + batch));
      x.reset_c();
      // Members in reverse order: the arrays, not a stride, say where each one is.
      const int ea = element_bytes(x.types.a), eb = element_bytes(x.types.b);
      const int ec = element_bytes(x.types.c);
      std::vector<const void*> pa, pb;
      std::vector<void*> pc;
      for (int z = batch - 1; z >= 0; --z) {
        pa.push_back(x.a.get<char>() + z * x.stride_a * ea);
        pb.push_back(x.b.get<char>() + z * x.stride_b * eb);
        pc.push_back(x.c.get<char>() + z * x.stride_c * ec);
      }
      DeviceBuffer arrays(3 * size_t(batch) * sizeof(void*));
      void** dev = arrays.get<void*>();
      TGEMM_CUDA_CHECK(cudaMemcpy(dev, pa.data(), batch * sizeof(void*), cudaMemcpyDefault));
      TGEMM_CUDA_CHECK(
          cudaMemcpy(dev + batch, pb.data(), batch * sizeof(void*), cudaMemcpyDefault));
      TGEMM_CUDA_CHECK(
          cudaMemcpy(dev + 2 * batch, pc.data(), batch * sizeof(void*), cudaMemcpyDefault));
      GemmCall call = x.call(1.0f, -1.0f);
      call.batch_pointers = true;
      call.a = dev;
      call.b = dev + batch;
      call.c = dev + 2 * batch;
      ASSERT_TRUE(d->served_by(call).kernel);
      d->gemm(call, nullptr);
      TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
      // The reference reads the same members in stride order; reversed arrays map member z of
      // the call to stored member batch - 1 - z on all three operands alike.
      EXPECT_LT(x.error_against_cublas(call), bound(x.types)) << "batch " << batch;
    }
  }
}

TEST_F(BatchedGemmGpu, a_captured_strided_batch_replays_its_eager_result) {
  const Family f = families()[0];
  auto d = forced(f);
  Batch x(parse_gemm_types(f.types), Op::N, Op::T, 100, 60, 33, 6, 21);
  x.reset_c();
  const GemmCall call = x.call(2.0f, 0.0f);
  d->gemm(call, nullptr);  // prepares the problem: the captured call only launches
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const double eager = x.error_against_cublas(call);
  ASSERT_LT(eager, bound(x.types));
  cudaStream_t stream = nullptr;
  TGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  TGEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  d->gemm(call, stream);
  TGEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  TGEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  TGEMM_CUDA_CHECK(cudaMemset(x.c.get(), 0xFF, x.c.bytes()));
  x.reset_c();
  TGEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_LT(x.error_against_cublas(call), bound(x.types));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The C API end to end, served by whatever the shipped defaults or cuBLAS choose.
TEST_F(BatchedGemmGpu, the_c_api_strided_batched_call_matches_cublas) {
  tgemmHandle_t handle = nullptr;
  ASSERT_EQ(tgemmCreate(&handle, "/nonexistent/tgemm.db"), TGEMM_STATUS_SUCCESS);
  Batch x(GemmTypes{}, Op::T, Op::T, 33, 17, 9, 4, 31);
  x.reset_c();
  const float alpha = 1, beta = 1;
  const GemmCall call = x.call(alpha, beta);
  ASSERT_EQ(tgemmGemmStridedBatchedEx(
                handle, TGEMM_OP_T, TGEMM_OP_T, x.m, x.n, x.k, &alpha, x.a.get(), TGEMM_R_32F,
                call.lda, x.stride_a, x.b.get(), TGEMM_R_32F, call.ldb, x.stride_b, &beta,
                x.c.get(), TGEMM_R_32F, call.ldc, x.stride_c, x.batch, TGEMM_COMPUTE_32F, nullptr),
            TGEMM_STATUS_SUCCESS)
      << tgemmGetLastError();
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_LT(x.error_against_cublas(call), 1e-5);
  EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace tgemm
