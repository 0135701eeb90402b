// The vendor library as a contender (src/core/vendor_call.h) on a GPU: a tuned database whose
// best is a cuBLASLt algorithm or the cuBLAS call is served through that call, with the right
// result; tgemm-tune races cuBLAS and cuBLASLt's heuristic algorithms beside our kernels, and
// tgemm-bench prints our own best kernel's ratio beside the served one. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cublaslt_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "src/templates/build_versions.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/graph_capture.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

// 192 x 160 x 96 f32 NT: inputs in [-1, 1], C checked against a double reference.
struct VendorServed : ::testing::Test {
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    TGEMM_CUDA_CHECK(cudaSetDevice(0));
    info = query_device(0);
  }

  // A database whose only tuned problem has `call` as its best (our kernel 10x slower).
  void write_db(const KernelConfig& call) {
    TuningDb db(path, TuningDb::Mode::read_write);
    const int64_t device = db.upsert_device(info);
    const int64_t problem_id = db.upsert_problem(problem);
    const auto record = [&](const KernelConfig& config, const std::string& hash, double us) {
      TrialResult t;
      t.config = config;
      t.status = TrialStatus::ok;
      t.time_min_us = t.time_median_us = t.time_max_us = us;
      t.runs = 10;
      db.record_trial(0, problem_id, db.upsert_kernel(config, hash), device, std::nullopt, t,
                      {"", info.driver_version});
    };
    record(testing::sgemm_config(), this_build(0).template_hashes.at("sgemm_simt"), 100);
    record(call, cublas_version(), 10);
    db.update_best(problem_id, device);
  }

  // The problem's call on these buffers, alpha = 1.5, beta = 0.
  GemmCall call_on(const void* a, const void* b, void* c) const {
    return {problem.op_a,
            problem.op_b,
            int(problem.m),
            int(problem.n),
            int(problem.k),
            1.5f,
            0.0f,
            a,
            int(problem.lda),
            b,
            int(problem.ldb),
            c,
            int(problem.ldc),
            problem.types};
  }

  // The dispatcher's C for alpha = 1.5, beta = 0, against a double reference; `run` runs the
  // call (eagerly unless given).
  double served_error(Dispatcher& d, ServedBy* served,
                      const std::function<void(const GemmCall&)>& run = {}) const {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> a(size_t(problem.m * problem.lda)), b(size_t(problem.n * problem.ldb));
    for (auto* v : {&a, &b})
      for (float& x : *v) x = dist(rng);
    DeviceBuffer da(a.size() * 4), db(b.size() * 4), dc(size_t(problem.m * problem.ldc) * 4);
    TGEMM_CUDA_CHECK(cudaMemcpy(da.get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    TGEMM_CUDA_CHECK(cudaMemcpy(db.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    const GemmCall call = call_on(da.get(), db.get(), dc.get());
    *served = d.served_by(call);
    if (run)
      run(call);
    else
      d.gemm(call, nullptr);
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> c(size_t(problem.m * problem.ldc));
    TGEMM_CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
    double err = 0, norm = 0;
    for (int64_t i = 0; i < problem.m; ++i)
      for (int64_t j = 0; j < problem.n; ++j) {
        double ref = 0;
        for (int64_t p = 0; p < problem.k; ++p)  // A is m x k (N), B stored n x k (T)
          ref += double(a[size_t(i * problem.lda + p)]) * double(b[size_t(j * problem.ldb + p)]);
        ref *= 1.5;
        const double got = c[size_t(i * problem.ldc + j)];
        if (!std::isfinite(got)) return INFINITY;
        err += (got - ref) * (got - ref);
        norm += ref * ref;
      }
    return std::sqrt(err / norm);
  }

  DeviceInfo info;
  TempDir dir{"vendor_gpu"};
  std::string path = dir.file("t.db");
  Problem problem = Problem::packed(GemmTypes{}, Op::N, Op::T, 192, 160, 96);
};

TEST_F(VendorServed, a_cublaslt_best_is_served_with_its_algorithm_and_is_right) {
  cublasLtHandle_t handle = nullptr;
  ASSERT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::vector<LtAlgoConfig> algos;
  {
    LtGemm lt(handle, problem);
    algos = lt.heuristic(4, size_t(32) << 20);
  }
  cublasLtDestroy(handle);
  ASSERT_FALSE(algos.empty());
  const KernelConfig call = cublaslt_call(algos.back());  // not the heuristic's first
  write_db(call);
  Dispatcher d({path, {}, /*cublas_fallback=*/false});
  ServedBy served;
  EXPECT_LT(served_error(d, &served), 1e-5);
  EXPECT_EQ(served.path, Selection::exact);
  ASSERT_TRUE(served.kernel);
  EXPECT_EQ(*served.kernel, call);
}

// Prepared, a cuBLASLt best (and the workspace its algorithm takes) captures into a CUDA graph
// in every capture mode, and each replay is right.
TEST_F(VendorServed, a_cublaslt_best_replays_in_a_graph_after_prepare) {
  cublasLtHandle_t handle = nullptr;
  ASSERT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::vector<LtAlgoConfig> algos;
  {
    LtGemm lt(handle, problem);
    algos = lt.heuristic(8, size_t(32) << 20);
  }
  cublasLtDestroy(handle);
  ASSERT_FALSE(algos.empty());
  const KernelConfig call = cublaslt_call(algos.front());
  write_db(call);
  for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                     cudaStreamCaptureModeRelaxed}) {
    SCOPED_TRACE(int(mode));
    Dispatcher d({path, {}, /*cublas_fallback=*/false});
    PrepareRequest request;
    request.call = call_on(nullptr, nullptr, nullptr);
    d.prepare({request});
    CudaStream stream;
    ServedBy served;
    const double err = served_error(d, &served, [&](const GemmCall& c) {
      const testing::CapturedGraph graph(stream.get(), mode, [&] { d.gemm(c, stream.get()); });
      EXPECT_GE(graph.nodes(), 1u);
      graph.launch(stream.get());
      graph.launch(stream.get());  // beta = 0: a second replay gives the same C
      stream.synchronize();
    });
    EXPECT_LT(err, 1e-5);
    ASSERT_TRUE(served.kernel);
    EXPECT_EQ(*served.kernel, call);
  }
}

// Without prepare, the first call of the problem on a capturing stream is refused, not run.
TEST_F(VendorServed, a_vendor_best_not_prepared_is_refused_inside_a_capture) {
  write_db(cublas_default_call());
  Dispatcher d({path, {}, /*cublas_fallback=*/false});
  DeviceBuffer buffer(
      size_t(problem.m * problem.k + problem.n * problem.k + problem.m * problem.n) * 4);
  float* a = buffer.get<float>();
  const GemmCall call =
      call_on(a, a + problem.m * problem.k, a + (problem.m + problem.n) * problem.k);
  CudaStream stream;
  EXPECT_THROW(testing::CapturedGraph(stream.get(), cudaStreamCaptureModeGlobal,
                                      [&] { d.gemm(call, stream.get()); }),
               NotPreparedError);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(VendorServed, a_cublas_best_is_served_by_cublas_and_is_right) {
  write_db(cublas_default_call());
  Dispatcher d({path, {}, /*cublas_fallback=*/false});
  ServedBy served;
  EXPECT_LT(served_error(d, &served), 1e-5);
  EXPECT_EQ(served.path, Selection::exact);
  ASSERT_TRUE(served.kernel);
  EXPECT_EQ(*served.kernel, cublas_default_call());
}

// tgemm-tune records cuBLAS and a few cuBLASLt algorithms per problem as verified, timed
// trials; the best is the fastest of everything, and tgemm-bench serves it with ours beside.
TEST(VendorTuneGpu, tune_races_the_vendor_calls_and_bench_prints_ours_beside_the_served) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  TempDir dir("vendor_tune_gpu");
  const std::string db = dir.file("t.db");
  auto tune = run_tool("tgemm-tune", testing::tiny_tune_args("tiny_sgemm_simt", db));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const std::string vendor =
      "select count(*) from trials t join kernels k on k.id = t.kernel_id "
      "where t.status = 'ok' and k.library = ";
  EXPECT_EQ(query_int(db, vendor + "'cublas'"), 2) << tune.output;  // one per problem
  EXPECT_GE(query_int(db, vendor + "'cublasLt'"), 2) << tune.output;
  // The best is the fastest current ok trial, whichever library it is.
  EXPECT_EQ(query_int(db,
                      "select count(*) from best_kernels b where b.us > (select "
                      "round(min(t.time_median_us), 2) from trials t join problems p on "
                      "p.id = t.problem_id where p.key = b.problem_key and t.status = 'ok')"),
            0);
  auto bench = run_tool("tgemm-bench", "--db " + db +
                                           " --shapes " TGEMM_SOURCE_DIR
                                           "/tests/data/shapes/tiny.yaml --max-ms 20");
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("ours"), std::string::npos) << bench.output;
  EXPECT_NE(bench.output.find("our own best kernels'"), std::string::npos) << bench.output;
}

}  // namespace
}  // namespace tgemm
