// FP8 on an sm_90 GPU. gemm_tma_wgmma's FP8 builds through the evaluator (the pedantic f32
// GEMM of the decoded operands, scales applied, poisoned C): E4M3 and the mixed pairs into
// bf16, f16 and f32 C, layout NT, tiled, ragged and prime sizes with rows padded to 16 bytes,
// K up to 28672 (the promoted sums keep the error of one slice), beta 0 and not, split,
// clustered and tensor-stored configs; the other layouts through packed operands. Then the
// C API: tgemmGemmScaledEx and tgemmGemmEx (unscaled) against an FP64 host reference, the
// scales read from device memory at run time, a problem tuned to the vendor call served by
// cuBLASLt's FP8 call with its workspace, and each bad input a status: null scales, scales
// on non-FP8 types, FP8 with A's rows misaligned (no kernel, no cuBLASLt call). Skips without
// sm_90.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/device_info.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cublas_gemm.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/device_buffer.h"
#include "tests/common/temp_dir.h"
#include "tests/common/tma_configs.h"
#include "tests/gpu/mma_gpu_harness.h"
#include "tgemm/tgemm_c.h"

namespace tgemm {
namespace {

const std::vector<const char*> kFp8Types = {"e4m3_out_bf16", "e5m2_e4m3_out_f32",
                                            "e4m3_e5m2_out_f16"};

const std::vector<KernelConfig>& configs() {
  using testing::tma_config;
  static const std::vector<KernelConfig> c = {
      tma_config(128, 128, 2, 6, 8),              // the largest FP8 tile, a deep ring
      tma_config(64, 128, 1, 7, 1),               // one consumer, seven stages
      tma_config(64, 64, 1, 2, 1),                // the smallest, two stages
      tma_config(128, 128, 2, 4, 1, 4),           // split in four
      tma_config(128, 128, 2, 4, 8, 1, 2),        // a cluster of two sharing B
      tma_config(128, 128, 2, 4, 1, 1, 2, 2),     // four blocks sharing A and B
      tma_config(128, 128, 2, 4, 8, 1, 2, 1, 1),  // C by tensor stores (beta 0)
      tma_config(128, 192, 2, 4, 8, 1, 2, 1, 1),  // the widest: slices promoted unpipelined
  };
  return c;
}

class Fp8KernelGpu : public testing::MmaGpuTest {
 protected:
  Fp8KernelGpu() : MmaGpuTest(configs(), "gemm_tma_wgmma") {}
  void SetUp() override {
    MmaGpuTest::SetUp();
    if (IsSkipped()) return;
    if (arch_ != "sm_90") GTEST_SKIP() << "FP8 wgmma needs sm_90 (have " << arch_ << ")";
  }
  const testing::MmaKernels& kernels() const override {
    static const testing::MmaKernels built(configs(), arch_, "gemm_tma_wgmma", kFp8Types);
    return built;
  }
};

Problem fp8_problem(size_t type, Op a, Op b, int64_t m, int64_t n, int64_t k, float beta) {
  Problem p = Problem::packed(parse_gemm_types(kFp8Types[type]), a, b, m, n, k);
  p.beta_zero = beta == 0.0f;
  return testing::stored(p, testing::Storage::ld_padded16);
}

TEST_F(Fp8KernelGpu, every_pair_and_output_is_correct_on_tiled_ragged_and_prime_shapes) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  // K of one partial 128-deep slice, several slices, a ragged last slice; past one wave.
  const std::vector<Shape> shapes = {{256, 256, 256},  {64, 64, 64},      {200, 136, 264},
                                     {97, 61, 131},    {1, 7, 3},         {1000, 1032, 1000},
                                     {257, 509, 4100}, {2048, 2048, 128}, {256, 384, 28672}};
  for (size_t type = 0; type < kFp8Types.size(); ++type)
    for (const auto& [m, n, k] : shapes) {
      run_case(type, fp8_problem(type, Op::N, Op::T, m, n, k, 0.0f), 1.0f, 0.0f);
      run_case(type, fp8_problem(type, Op::N, Op::T, m, n, k, 0.5f), -1.5f, 0.5f);
    }
  expect_no_failures();
  for (size_t type = 0; type < kFp8Types.size(); ++type)
    for (size_t i = 0; i < configs().size(); ++i)
      EXPECT_EQ((ok_runs_[{type, i}]), 9 * 2)
          << kFp8Types[type] << " " << configs()[i].canonical_name();
}

// FP8 wgmma reads K-major operands only: in the other layouts the operands stored MN-major are
// packed K-major into the workspace first; every config but split-K (which keeps its partial
// sums there) computes them right, on ragged sizes and K from 3 to 4100.
TEST_F(Fp8KernelGpu, every_other_layout_is_correct_its_mn_major_operands_packed) {
  using Shape = std::tuple<int64_t, int64_t, int64_t>;
  const std::vector<Shape> shapes = {{200, 136, 264}, {97, 61, 131}, {1, 7, 3}, {257, 509, 4100}};
  for (size_t type = 0; type < kFp8Types.size(); ++type)
    for (const auto& [a, b] :
         {std::pair{Op::T, Op::N}, std::pair{Op::N, Op::N}, std::pair{Op::T, Op::T}})
      for (const auto& [m, n, k] : shapes)
        run_case(type, fp8_problem(type, a, b, m, n, k, 0.5f), -1.5f, 0.5f);
  expect_no_failures();
  for (size_t type = 0; type < kFp8Types.size(); ++type)
    for (size_t i = 0; i < configs().size(); ++i)
      EXPECT_EQ((ok_runs_[{type, i}]), configs()[i].get("SPLIT_K") == 1 ? 3 * 4 : 0)
          << kFp8Types[type] << " " << configs()[i].canonical_name();
}

// ---- The C API --------------------------------------------------------------------------

DeviceBuffer upload(DType type, const std::vector<float>& values) {
  const std::vector<unsigned char> bytes = to_bytes(type, values);
  DeviceBuffer buffer(bytes.size());
  TGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  return buffer;
}

std::vector<float> random_values(DType type, size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(count);
  for (float& x : v) x = round_to(type, dist(rng));
  return v;
}

class Fp8ApiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    if (query_device(0).arch != "sm_90") GTEST_SKIP() << "FP8 kernels need sm_90";
    ASSERT_EQ(tgemmCreate(&handle_, dir_.file("none.db").c_str()), TGEMM_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (handle_) {
      EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS);
    }
  }

  enum class Scales { none, tensor, rowwise };

  // C = scale_a scale_b alpha A B^T + beta C (A m x k, B n x k, E4M3; C bf16) through
  // tgemmGemmScaledEx (or tgemmGemmEx for Scales::none), against FP64 on the host. The scales
  // are one each (`scale_a`, `scale_b`), or rowwise: m and n values around them.
  void expect_correct(int m, int n, int k, float scale_a, float scale_b, Scales mode) {
    SCOPED_TRACE(
        fmt::format("{}x{}x{} scales {} {} mode {}", m, n, k, scale_a, scale_b, int(mode)));
    std::mt19937 rng(uint32_t(m * 131 + n * 7 + k));
    const auto a = random_values(DType::e4m3, size_t(m) * k, rng);
    const auto b = random_values(DType::e4m3, size_t(n) * k, rng);
    const auto c0 = random_values(DType::bf16, size_t(m) * n, rng);
    DeviceBuffer da = upload(DType::e4m3, a), db = upload(DType::e4m3, b);
    DeviceBuffer dc = upload(DType::bf16, c0);
    const bool rowwise = mode == Scales::rowwise;
    std::vector<float> row_scales(size_t(rowwise ? m : 1), scale_a);
    std::vector<float> col_scales(size_t(rowwise ? n : 1), scale_b);
    std::uniform_real_distribution<float> spread(0.5f, 1.5f);  // each row and column its own
    if (rowwise)
      for (auto* v : {&row_scales, &col_scales})
        for (float& x : *v) x *= spread(rng);
    std::vector<float> both = row_scales;  // B's scales start 16 bytes aligned, as cuBLASLt's
    both.resize((both.size() + 3) / 4 * 4, 0.0f);
    const size_t b_at = both.size();
    both.insert(both.end(), col_scales.begin(), col_scales.end());
    DeviceBuffer scales = upload(DType::f32, both);
    const tgemmScales_t s = {scales.get<float>(), scales.get<float>() + b_at,
                             rowwise ? TGEMM_SCALE_ROWWISE : TGEMM_SCALE_TENSOR};
    const bool scaled = mode != Scales::none;
    const float alpha = 0.5f, beta = 0.25f;
    const tgemmStatus_t st =
        scaled
            ? tgemmGemmScaledEx(handle_, TGEMM_OP_N, TGEMM_OP_T, m, n, k, &alpha, da.get(),
                                TGEMM_R_8F_E4M3, k, db.get(), TGEMM_R_8F_E4M3, k, &beta, dc.get(),
                                TGEMM_R_16BF, n, TGEMM_COMPUTE_32F, &s, nullptr, nullptr)
            : tgemmGemmEx(handle_, TGEMM_OP_N, TGEMM_OP_T, m, n, k, &alpha, da.get(),
                          TGEMM_R_8F_E4M3, k, db.get(), TGEMM_R_8F_E4M3, k, &beta, dc.get(),
                          TGEMM_R_16BF, n, TGEMM_COMPUTE_32F, nullptr);
    ASSERT_EQ(st, TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
    TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> bytes(dc.bytes());
    TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), dc.get(), bytes.size(), cudaMemcpyDeviceToHost));
    const std::vector<float> c = from_bytes(DType::bf16, bytes);
    std::vector<double> ref(c.size());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const double scale = !scaled ? 1.0
                                     : double(row_scales[rowwise ? size_t(i) : 0]) *
                                           col_scales[rowwise ? size_t(j) : 0];
        double sum = 0;
        for (int l = 0; l < k; ++l) sum += double(a[size_t(i) * k + l]) * b[size_t(j) * k + l];
        ref[size_t(i) * n + j] = scale * alpha * sum + beta * double(c0[size_t(i) * n + j]);
      }
    const ResultCheck check =
        check_result(c.data(), ref.data(), m, n, n, relative_error_bound(gemm_types("e4m3"), k));
    EXPECT_TRUE(check.ok) << check.error;
  }

  testing::TempDir dir_{"fp8_api"};
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(Fp8ApiGpu, scaled_and_unscaled_calls_match_the_fp64_reference) {
  expect_correct(256, 256, 512, 1.75f, 0.5f, Scales::tensor);
  // Ragged tiles, K of two slices and a part.
  expect_correct(100, 300, 272, 3.0f, 1.25f, Scales::tensor);
  expect_correct(256, 256, 512, 1.75f, 0.5f, Scales::none);
}

// Each row of C scaled by A's value for it and each column by B's (cuBLASLt's outer vectors):
// a kernel that applied one row's or column's scale to another fails the FP64 check.
TEST_F(Fp8ApiGpu, rowwise_scales_match_the_fp64_reference) {
  expect_correct(256, 384, 512, 1.75f, 0.5f, Scales::rowwise);
  expect_correct(100, 300, 272, 3.0f, 1.25f, Scales::rowwise);   // ragged tiles: guarded loads
  expect_correct(1000, 1000, 512, 1.0f, 1.0f, Scales::rowwise);  // K-major, aligned: TMA family
}

TEST_F(Fp8ApiGpu, bad_scales_types_and_layouts_get_a_status) {
  const float one = 1, zero = 0;
  DeviceBuffer buffer(1 << 16);
  const tgemmScales_t none = {nullptr, nullptr, TGEMM_SCALE_TENSOR};
  const tgemmScales_t some = {buffer.get<float>(), buffer.get<float>(), TGEMM_SCALE_TENSOR};
  const auto scaled = [&](tgemmDataType_t in, tgemmOperation_t op_b, const tgemmScales_t* s) {
    return tgemmGemmScaledEx(handle_, TGEMM_OP_N, op_b, 64, 64, 64, &one, buffer.get(), in, 64,
                             buffer.get(), in, 64, &zero, buffer.get(), TGEMM_R_16BF, 64,
                             TGEMM_COMPUTE_32F, s, nullptr, nullptr);
  };
  EXPECT_EQ(scaled(TGEMM_R_8F_E4M3, TGEMM_OP_T, nullptr), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("must not be null"), std::string::npos);
  EXPECT_EQ(scaled(TGEMM_R_8F_E4M3, TGEMM_OP_T, &none), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(scaled(TGEMM_R_16BF, TGEMM_OP_T, &some), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("FP8 inputs"), std::string::npos);
  // A stored K-major with rows 65 bytes apart: no tensor copy reads it in place (it is not
  // packed), and cuBLASLt's FP8 needs 16-byte aligned rows too.
  EXPECT_EQ(
      tgemmGemmScaledEx(handle_, TGEMM_OP_N, TGEMM_OP_T, 64, 64, 64, &one, buffer.get(),
                        TGEMM_R_8F_E4M3, 65, buffer.get(), TGEMM_R_8F_E4M3, 64, &zero, buffer.get(),
                        TGEMM_R_16BF, 64, TGEMM_COMPUTE_32F, &some, nullptr, nullptr),
      TGEMM_STATUS_NOT_SUPPORTED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("cuBLASLt"), std::string::npos)
      << tgemmGetLastError();
  // FP8 into FP8: not a type tgemm computes.
  EXPECT_EQ(tgemmGemmEx(handle_, TGEMM_OP_N, TGEMM_OP_T, 64, 64, 64, &one, buffer.get(),
                        TGEMM_R_8F_E4M3, 64, buffer.get(), TGEMM_R_8F_E4M3, 64, &zero, buffer.get(),
                        TGEMM_R_8F_E4M3, 64, TGEMM_COMPUTE_32F, nullptr),
            TGEMM_STATUS_TYPE_NOT_SUPPORTED);
}

// A problem tuned to the vendor call is served by cuBLASLt's FP8 call. At 8192^3 its heuristic
// has no algorithm without a workspace: the handle reserves one (tgemmGetWorkspaceSize counts
// it) and the result matches FP64 on sampled rows.
TEST_F(Fp8ApiGpu, a_problem_tuned_to_the_vendor_call_runs_cublaslt_with_its_workspace) {
  const int n = 8192;
  Problem problem = Problem::packed(gemm_types("e4m3"), Op::N, Op::T, n, n, n);
  const std::string path = dir_.file("vendor.db");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    const DeviceInfo info = query_device(0);
    const int64_t device = db.upsert_device(info);
    const int64_t problem_id = db.upsert_problem(problem);
    TrialResult t;
    t.config = cublas_default_call();
    t.status = TrialStatus::ok;
    t.time_min_us = t.time_median_us = t.time_max_us = 800;
    t.runs = 10;
    db.record_trial(0, problem_id, db.upsert_kernel(t.config, cublas_version()), device,
                    std::nullopt, t, {"", info.driver_version});
    db.update_best(problem_id, device);
  }
  tgemmHandle_t tuned = nullptr;
  ASSERT_EQ(tgemmCreate(&tuned, path.c_str()), TGEMM_STATUS_SUCCESS);
  std::mt19937 rng(11);
  const auto a = random_values(DType::e4m3, size_t(n) * n, rng);
  const auto b = random_values(DType::e4m3, size_t(n) * n, rng);
  DeviceBuffer da = upload(DType::e4m3, a), db = upload(DType::e4m3, b);
  DeviceBuffer dc(size_t(n) * n * 2);
  const float alpha = 1, beta = 0;
  ASSERT_EQ(tgemmGemmEx(tuned, TGEMM_OP_N, TGEMM_OP_T, n, n, n, &alpha, da.get(), TGEMM_R_8F_E4M3,
                        n, db.get(), TGEMM_R_8F_E4M3, n, &beta, dc.get(), TGEMM_R_16BF, n,
                        TGEMM_COMPUTE_32F, nullptr),
            TGEMM_STATUS_SUCCESS)
      << tgemmGetLastError();
  TGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  size_t workspace = 0;
  ASSERT_EQ(tgemmGetWorkspaceSize(tuned, &workspace), TGEMM_STATUS_SUCCESS);
  EXPECT_GT(workspace, 0u) << "cuBLASLt's algorithm for 8192^3 FP8 took no workspace";
  EXPECT_EQ(tgemmDestroy(tuned), TGEMM_STATUS_SUCCESS);
  for (const int row : {0, n / 2 + 3, n - 1}) {
    std::vector<unsigned char> bytes(size_t(n) * 2);
    TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), dc.get<char>() + size_t(row) * n * 2, bytes.size(),
                                cudaMemcpyDeviceToHost));
    const std::vector<float> c = from_bytes(DType::bf16, bytes);
    std::vector<double> ref(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int l = 0; l < n; ++l) sum += double(a[size_t(row) * n + l]) * b[size_t(j) * n + l];
      ref[size_t(j)] = sum;
    }
    const ResultCheck check =
        check_result(c.data(), ref.data(), 1, n, n, relative_error_bound(gemm_types("e4m3"), n));
    EXPECT_TRUE(check.ok) << "row " << row << ": " << check.error;
  }
}

}  // namespace
}  // namespace tgemm
