// f16 and bf16 end to end on a GPU: tgemm-tune tunes them (through gemm_naive, the one
// family that computes them today) and tgemmGemmEx serves them from that database, or
// through cuBLAS without one. Results are checked against a double-precision reference on
// the inputs as stored (rounded to their type). Skips cleanly without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "src/core/device_info.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "src/dispatch/dispatcher.h"
#include "tests/cli/cli_runner.h"
#include "tgemm/tgemm_c.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::run_tool;
using testing::TempDir;

tgemmDataType_t c_api_type(DType t) {
  return t == DType::f32 ? TGEMM_R_32F : t == DType::f16 ? TGEMM_R_16F : TGEMM_R_16BF;
}

// A device copy of `values` (f32, already rounded to `type`) in `type`.
DeviceBuffer upload(DType type, const std::vector<float>& values) {
  const std::vector<unsigned char> bytes = to_bytes(type, values);
  DeviceBuffer buffer(bytes.size());
  TGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  return buffer;
}

std::vector<float> download(DType type, const DeviceBuffer& buffer) {
  std::vector<unsigned char> bytes(buffer.bytes());
  TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.get(), bytes.size(), cudaMemcpyDeviceToHost));
  return from_bytes(type, bytes);
}

std::vector<float> random_values(DType type, size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(count);
  for (float& x : v) x = round_to(type, dist(rng));
  return v;
}

// One tgemmGemmEx call on `p` (packed) with fresh inputs, checked against FP64.
void expect_gemm_ex_correct(tgemmHandle_t handle, const Problem& p, float alpha, float beta) {
  SCOPED_TRACE(p.key() + fmt::format(" alpha {} beta {}", alpha, beta));
  std::mt19937 rng(uint32_t(p.m * 131 + p.n * 7 + p.k));
  const auto a = random_values(p.types.a, size_t(p.a_rows() * p.lda), rng);
  const auto b = random_values(p.types.b, size_t(p.b_rows() * p.ldb), rng);
  const auto c0 = random_values(p.types.c, size_t(p.m * p.ldc), rng);
  DeviceBuffer da = upload(p.types.a, a), db = upload(p.types.b, b), dc = upload(p.types.c, c0);
  const tgemmStatus_t st = tgemmGemmEx(
      handle, p.op_a == Op::T ? TGEMM_OP_T : TGEMM_OP_N, p.op_b == Op::T ? TGEMM_OP_T : TGEMM_OP_N,
      int(p.m), int(p.n), int(p.k), &alpha, da.get(), c_api_type(p.types.a), int(p.lda), db.get(),
      c_api_type(p.types.b), int(p.ldb), &beta, dc.get(), c_api_type(p.types.c), int(p.ldc),
      TGEMM_COMPUTE_32F, nullptr);
  ASSERT_EQ(st, TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> c = download(p.types.c, dc);
  std::vector<double> ref(c.size());
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const double x = a[size_t(p.op_a == Op::N ? i * p.lda + l : l * p.lda + i)];
        const double y = b[size_t(p.op_b == Op::N ? l * p.ldb + j : j * p.ldb + l)];
        sum += x * y;
      }
      ref[size_t(i * p.ldc + j)] = alpha * sum + beta * double(c0[size_t(i * p.ldc + j)]);
    }
  const ResultCheck check =
      check_result(c.data(), ref.data(), p.m, p.n, p.ldc, relative_error_bound(p.types, p.k));
  EXPECT_TRUE(check.ok) << check.error;
}

class TypedGemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(TypedGemmGpu, f16_and_bf16_are_tuned_then_served_exactly_by_gemm_ex) {
  TempDir dir("typed_gpu");
  const std::string db = dir.file("t.db");
  const std::string shapes = TGEMM_SOURCE_DIR "/tests/data/shapes/typed.yaml";
  // gemm_naive's space alone: the test is about the 16-bit types' plumbing, not which family
  // wins (gemm_mma's whole space would take long to tune exhaustively).
  auto tune = run_tool("tgemm-tune", "--shapes " + shapes +
                                         " --space " TGEMM_SOURCE_DIR
                                         "/configs/spaces/gemm_naive.yaml"
                                         " --strategy exhaustive --budget 0 "
                                         "--timeout 20 --db " +
                                         db);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const auto problems = load_problem_set(shapes);
  EXPECT_EQ(
      query_int(db, "select count(*) from tgemm_best_kernels where kernel like 'gemm_naive%'"),
      int64_t(problems.size()))
      << tune.output;
  EXPECT_EQ(query_int(db,
                      "select count(*) from trials t join kernels k on k.id = t.kernel_id "
                      "where t.status != 'ok' and k.library = 'tgemm'"),
            0)
      << tune.output;

  Dispatcher dispatcher({db, {}, true});
  tgemmHandle_t handle = nullptr;
  ASSERT_EQ(tgemmCreate(&handle, db.c_str()), TGEMM_STATUS_SUCCESS);
  for (const NamedProblem& named : problems) {
    const Problem& p = named.problem;
    // The dispatcher takes the tuned kernel for the very problem.
    DeviceBuffer a(size_t(p.a_rows() * p.lda) * 4), b(size_t(p.b_rows() * p.ldb) * 4);
    DeviceBuffer c(size_t(p.m * p.ldc) * 4);
    GemmCall call{p.op_a,  p.op_b,     int(p.m), int(p.n),   int(p.k), 1,          0,
                  a.get(), int(p.lda), b.get(),  int(p.ldb), c.get(),  int(p.ldc), p.types};
    EXPECT_EQ(dispatcher.selection(call), Selection::exact) << p.key();
    expect_gemm_ex_correct(handle, p, 1.0f, 0.0f);
    expect_gemm_ex_correct(handle, p, -0.5f, 0.75f);  // beta != 0: served from the nearest
  }
  EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
}

TEST_F(TypedGemmGpu, untuned_types_fall_back_to_cublas_and_bad_combinations_are_refused) {
  TempDir dir("typed_gpu_none");
  tgemmHandle_t handle = nullptr;
  ASSERT_EQ(tgemmCreate(&handle, dir.file("none.db").c_str()), TGEMM_STATUS_SUCCESS);
  expect_gemm_ex_correct(handle, Problem::packed(gemm_types("bf16"), Op::N, Op::T, 70, 50, 30),
                         1.0f, 0.0f);
  expect_gemm_ex_correct(
      handle, Problem::packed(gemm_types("f16", "f32"), Op::T, Op::N, 33, 20, 64), 2.0f, 1.0f);
  // A f16, B bf16: nothing computes it, and nothing is launched.
  const float one = 1, zero = 0;
  DeviceBuffer buffer(4096);
  EXPECT_EQ(tgemmGemmEx(handle, TGEMM_OP_N, TGEMM_OP_N, 8, 8, 8, &one, buffer.get(), TGEMM_R_16F, 8,
                        buffer.get(), TGEMM_R_16BF, 8, &zero, buffer.get(), TGEMM_R_16F, 8,
                        TGEMM_COMPUTE_32F, nullptr),
            TGEMM_STATUS_TYPE_NOT_SUPPORTED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("same element type"), std::string::npos);
  EXPECT_EQ(tgemmDestroy(handle), TGEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace tgemm
