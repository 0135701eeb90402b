// Fused epilogues on a GPU: every family that applies one computes D = act(alpha op(A) op(B) +
// beta C + bias) (bias along N and M, D apart from C, aux) as a host reference does on cuBLAS's
// pedantic FP32 GEMM; the split-K and stream-K endings apply the activation once; the
// dispatcher's fallbacks (cuBLASLt's fused call, cuBLAS then the pass) agree; and the evaluator
// catches a kernel built without the epilogue. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/templates/kernel_build.h"
#include "src/templates/template_registry.h"
#include "tests/common/gpu_family_configs.h"
#include "tests/common/tma_configs.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {
namespace {

struct Family {
  const char* types;
  KernelConfig config;
  int min_arch;
};

KernelConfig line(const char* family, const char* params) {
  return KernelConfig::from_params_text(family, params);
}

std::vector<Family> families() {
  using namespace testing;
  return {{"f32", simt_gpu_config(), 75},
          {"f32", warp_gpu_config(), 80},
          {"f16", mma_gpu_config(), 75},
          {"bf16", mma_gpu_config(), 80},
          {"bf16_out_f32", mma_gpu_config(), 80},
          {"f16", wgmma_gpu_config(), 90},
          {"bf16", wgmma_gpu_config(), 90},
          {"bf16", tma_config(128, 128, 2, 4), 90},
          {"f16_out_f32", tma_config(128, 256, 2, 4), 90},
          {"f16", naive_gpu_config(), 75}};
}

// The configs that cut K: their endings must apply the activation once, to the whole sum.
std::vector<Family> split_families() {
  return {{"f32",
           line("sgemm_simt",
                "BM=64,BN=64,BK=16,TM=4,TN=4,WARP_N=8,VEC=1,PAD_A=4,PAD_B=4,STAGES=2,SPLIT_K=4,"
                "SPLIT_MODE=1,SWIZZLE=1,MIN_BLOCKS=1"),
           75},
          {"f32",
           line("sgemm_warp",
                "BM=64,BN=64,BK=8,WM=32,WN=32,TM=8,TN=4,STAGES=3,VEC=4,SPLIT_K=1,TAIL_SPLIT=4,"
                "SWIZZLE=1,MIN_BLOCKS=1,PACK_B=0"),
           80},
          {"bf16", testing::tma_config(128, 128, 2, 4, 8, 3), 90}};
}

double activate(Activation a, double x) {
  switch (a) {
    case Activation::none:
      return x;
    case Activation::relu:
      return x > 0 ? x : 0;
    case Activation::gelu:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::gelu_erf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::silu:
      return x / (1 + std::exp(-x));
  }
  return x;
}

// One GEMM with an epilogue in device memory: A, B, C (and its start), the bias, D apart from C
// (or none) and aux, all random; `expected` is the host's epilogue on cuBLAS's pedantic GEMM.
struct Case {
  GemmTypes types;
  Epilogue epilogue;
  int m, n, k;
  float alpha = 1.25f, beta;
  DeviceBuffer a, b, c, c0, bias, d, aux;
  std::vector<float> host_c0, host_bias;

  Case(GemmTypes t, Epilogue e, int m_, int n_, int k_, float beta_, uint32_t seed)
      : types(t), epilogue(e), m(m_), n(n_), k(k_), beta(beta_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    const auto upload = [&](DType type, size_t count, std::vector<float>* keep) {
      std::vector<float> values(count);
      for (float& x : values) x = round_to(type, dist(rng));
      const std::vector<unsigned char> bytes = to_bytes(type, values);
      DeviceBuffer buffer(bytes.size());
      TGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), bytes.data(), bytes.size(), cudaMemcpyDefault));
      if (keep) *keep = values;
      return buffer;
    };
    a = upload(t.a, size_t(m) * k, nullptr);
    b = upload(t.b, size_t(k) * n, nullptr);
    c0 = upload(t.c, size_t(m) * n, &host_c0);
    c = DeviceBuffer(c0.bytes());
    TGEMM_CUDA_CHECK(cudaMemcpy(c.get(), c0.get(), c0.bytes(), cudaMemcpyDeviceToDevice));
    const DType bias_type = e.bias_f32 ? DType::f32 : t.c;
    if (e.bias != BiasAlong::none)
      bias = upload(bias_type, size_t(e.bias == BiasAlong::n ? n : m), &host_bias);
    if (e.separate_d) d = DeviceBuffer(c0.bytes());
    if (e.aux) aux = DeviceBuffer(c0.bytes());
  }

  // The call, op(A) = A (N) and op(B) = B^T (T): A m x k, B n x k.
  GemmCall call() const {
    GemmCall x{Op::N, Op::T, m, n, k, alpha, beta, a.get(), k, b.get(), k, c.get(), n, types};
    x.epilogue = epilogue;
    x.bias = bias.get();
    x.d = epilogue.separate_d ? d.get() : nullptr;
    x.ldd = n;
    x.aux = epilogue.aux ? aux.get() : nullptr;
    x.ldaux = n;
    return x;
  }

  // x = alpha op(A) op(B) + beta C0 + bias, per element, from cuBLAS in pedantic FP32.
  std::vector<double> pre_activation() const {
    DeviceBuffer ref(size_t(m) * n * sizeof(float));
    TGEMM_CUDA_CHECK(cudaMemcpy(ref.get(), host_c0.data(), ref.bytes(), cudaMemcpyDefault));
    GemmCall r = call();
    r.epilogue = Epilogue{};
    r.c = ref.get();
    cublasHandle_t handle = nullptr;
    EXPECT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(row_major_gemm(handle, r, CublasMath::reference, DType::f32), CUBLAS_STATUS_SUCCESS);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    cublasDestroy(handle);
    std::vector<float> gemm(size_t(m) * n);
    TGEMM_CUDA_CHECK(cudaMemcpy(gemm.data(), ref.get(), ref.bytes(), cudaMemcpyDefault));
    std::vector<double> x(gemm.begin(), gemm.end());
    if (epilogue.bias != BiasAlong::none)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
          x[size_t(i) * n + j] += host_bias[size_t(epilogue.bias == BiasAlong::n ? j : i)];
    return x;
  }

  static std::vector<float> download(const DeviceBuffer& buffer, DType type) {
    std::vector<unsigned char> bytes(buffer.bytes());
    TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.get(), bytes.size(), cudaMemcpyDefault));
    return from_bytes(type, bytes);
  }

  // ||got - want|| / ||want||, infinite for a non-finite element.
  static double error(const std::vector<float>& got, const std::vector<double>& want) {
    double err = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!std::isfinite(got[i])) return INFINITY;
      err += (got[i] - want[i]) * (got[i] - want[i]);
      norm += want[i] * want[i];
    }
    return std::sqrt(err / norm);
  }

  // D's error against the reference (and aux's, and C untouched where D is apart).
  void expect_matches(double bound) const {
    const std::vector<double> x = pre_activation();
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = activate(epilogue.activation, x[i]);
    EXPECT_LT(error(download(epilogue.separate_d ? d : c, types.c), want), bound) << "D";
    if (epilogue.aux) {
      EXPECT_LT(error(download(aux, types.c), x), bound) << "aux";
    }
    if (epilogue.separate_d) {
      EXPECT_EQ(download(c, types.c), host_c0) << "C must stay as it was";
    }
  }
};

double bound(const GemmTypes& t) { return t.c == DType::f32 && t.a == DType::f32 ? 1e-5 : 1e-2; }

Epilogue epilogue(const char* name) { return parse_epilogue_name(name); }

class EpilogueGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    arch_ = arch_number(query_device(0).arch);
  }
  static std::unique_ptr<Dispatcher> forced(const Family& family) {
    return testing::forced_dispatcher(family.types, family.config);
  }
  void run_and_check(Dispatcher& d, const Family& f, const Case& x) {
    const GemmCall call = x.call();
    const ServedBy served = d.served_by(call);
    ASSERT_TRUE(served.kernel) << to_string(served.path) << " " << x.epilogue.name();
    EXPECT_EQ(served.kernel->template_name, f.config.template_name);
    d.gemm(call, nullptr);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    x.expect_matches(bound(x.types));
  }
  int arch_ = 0;
};

// Every epilogue on every family: bias along N and M, in C's type and f32, each activation,
// aux, D apart from C, beta 0 and not, sizes that are no multiple of a tile.
TEST_F(EpilogueGpu, every_family_applies_every_epilogue_as_the_reference) {
  const char* names[] = {
      "bias",       "relu",        "bias_relu.aux",       "bias_gelu", "bias_gelu.aux.d",
      "gelu_erf.d", "bias_silu.m", "bias_gelu_erf.m.aux", "none.d"};
  for (const Family& f : families()) {
    if (arch_ < f.min_arch) continue;
    SCOPED_TRACE(f.config.canonical_name() + " " + f.types);
    auto d = forced(f);
    const GemmTypes types = parse_gemm_types(f.types);
    uint32_t seed = 1;
    for (const char* name : names)
      for (float beta : {0.0f, 0.75f}) {
        SCOPED_TRACE(std::string(name) + " beta " + std::to_string(beta));
        run_and_check(*d, f, Case(types, epilogue(name), 200, 136, 72, beta, seed++));
      }
    if (types.c != DType::f32) {  // an f32 bias for a 16-bit C
      Epilogue e = epilogue("bias_gelu");
      e.bias_f32 = true;
      run_and_check(*d, f, Case(types, e, 130, 264, 64, 0.0f, 99));
    }
  }
}

// ReLU of the sum is not the sum of ReLUs, and a bias added per slice would count several
// times: a split-K reduction or a stream tail that applied the epilogue per slice fails here.
TEST_F(EpilogueGpu, split_and_stream_k_apply_the_epilogue_once_after_the_last_slice) {
  for (const Family& f : split_families()) {
    if (arch_ < f.min_arch) continue;
    SCOPED_TRACE(f.config.canonical_name() + " " + f.types);
    auto d = forced(f);
    const GemmTypes types = parse_gemm_types(f.types);
    // Tiles past the last full wave (2145 of 64 x 64 on most GPUs) get the stream tail.
    for (const char* name : {"bias_relu.aux", "bias_gelu.m"})
      run_and_check(*d, f, Case(types, epilogue(name), 1040, 1056, 1024, 0.0f, 7));
  }
}

// No kernel of ours (no defaults, no database): cuBLASLt's fused call where it has the
// epilogue (bias + GELU keeping aux), else cuBLAS and the pass (SiLU, a bias along M, erf GELU),
// D apart from C and beta != 0 included.
TEST_F(EpilogueGpu, the_fallbacks_compute_what_our_kernels_do) {
  Dispatcher d(DispatcherOptions{"/nonexistent/tgemm.db", std::vector<DefaultKernel>{}, true});
  for (const char* types : {"f32", "bf16", "f16_out_f32"})
    for (const char* name : {"bias_gelu.aux", "bias_relu", "bias_silu.m.d", "gelu_erf.aux"})
      for (float beta : {0.0f, 0.5f}) {
        SCOPED_TRACE(std::string(types) + " " + name + " beta " + std::to_string(beta));
        const Case x(parse_gemm_types(types), epilogue(name), 96, 136, 64, beta, 3);
        EXPECT_EQ(d.served_by(x.call()).path, Selection::cublas);
        d.gemm(x.call(), nullptr);
        TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
        x.expect_matches(bound(x.types));
      }
}

// The tuner's view: an epilogue problem is verified against the epilogue's reference (aux
// included); a kernel built without the epilogue is a wrong result, with it ok.
TEST(EpilogueEvaluatorGpu, a_kernel_is_verified_against_the_epilogues_reference) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  GemmEvaluator evaluator(0);
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::T, 96, 80, 48);
  p.epilogue = epilogue("bias_gelu.aux");
  const CublasTiming cublas =
      evaluator.prepare(p, TimingOptions{0, 3, 3, 10.0, 0.5}, GemmScalars{1.0f, 0.0f}, true);
  ASSERT_TRUE(cublas.ok) << cublas.error;
  const Family f = families()[0];
  const GemmTemplate& family = template_named(f.config.template_name);
  const std::string arch = query_device(0).arch;
  const CompiledKernel fused = build_kernel(family, f.config, build_variant(p), arch);
  ASSERT_TRUE(fused.ok) << fused.error;
  const TrialResult ok = evaluator.evaluate(f.config, fused.cubin);
  EXPECT_EQ(ok.status, TrialStatus::ok) << ok.error;
  Problem plain = p;
  plain.epilogue = Epilogue{};
  const CompiledKernel unfused = build_kernel(family, f.config, build_variant(plain), arch);
  ASSERT_TRUE(unfused.ok) << unfused.error;
  EXPECT_EQ(evaluator.evaluate(f.config, unfused.cubin).status, TrialStatus::wrong_result);
}

}  // namespace
}  // namespace tgemm
