// The C and C++ APIs' argument checks and status codes; none of these needs a GPU.
#include <gtest/gtest.h>

#include <string>

#include "src/core/device_info.h"
#include "tests/common/thrown_message.h"
#include "tgemm/tgemm.h"
#include "tgemm/tgemm_c.h"

namespace {

const char* kNoDb = "/nonexistent/dir/tgemm.db";

class CApi : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(tgemmCreate(&handle_, kNoDb), TGEMM_STATUS_SUCCESS); }
  void TearDown() override { EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS); }
  tgemmStatus_t sgemm(int m, int n, int k, int lda, int ldb, int ldc,
                      tgemmOperation_t op_a = TGEMM_OP_N, const float* alpha = &one_) {
    return tgemmSgemm(handle_, op_a, TGEMM_OP_N, m, n, k, alpha, fake_, lda, fake_, ldb, &zero_,
                      fake_, ldc, nullptr);
  }
  static inline const float one_ = 1, zero_ = 0;
  float* fake_ = reinterpret_cast<float*>(uintptr_t(1) << 20);  // never dereferenced on host
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(CApi, missing_database_still_gives_a_handle) { EXPECT_NE(handle_, nullptr); }

TEST_F(CApi, null_handle_is_not_initialized) {
  EXPECT_EQ(tgemmSgemm(nullptr, TGEMM_OP_N, TGEMM_OP_N, 1, 1, 1, &one_, fake_, 1, fake_, 1, &zero_,
                       fake_, 1, nullptr),
            TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(tgemmDestroy(nullptr), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(tgemmCreate(nullptr, kNoDb), TGEMM_STATUS_INVALID_VALUE);
}

TEST_F(CApi, negative_dimension_is_invalid_and_named) {
  EXPECT_EQ(sgemm(-1, 4, 4, 4, 4, 4), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("m=-1"), std::string::npos)
      << tgemmGetLastError();
}

TEST_F(CApi, leading_dimension_shorter_than_a_row_is_invalid) {
  EXPECT_EQ(sgemm(8, 8, 16, 15, 8, 8), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("lda = 15"), std::string::npos);
  // op(A) = A^T: A is stored k x m, so its rows are m = 8 long and lda = 8 is fine...
  EXPECT_NE(sgemm(8, 8, 16, 8, 8, 8, TGEMM_OP_T), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(sgemm(8, 8, 16, 8, 7, 8), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(sgemm(8, 8, 16, 16, 8, 7), TGEMM_STATUS_INVALID_VALUE);
}

TEST_F(CApi, null_pointers_and_bad_ops_are_invalid) {
  EXPECT_EQ(sgemm(4, 4, 4, 4, 4, 4, TGEMM_OP_N, nullptr), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(tgemmSgemm(handle_, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4, &one_, nullptr, 4, fake_, 4,
                       &zero_, fake_, 4, nullptr),
            TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(tgemmSgemm(handle_, tgemmOperation_t(7), TGEMM_OP_N, 4, 4, 4, &one_, fake_, 4, fake_, 4,
                       &zero_, fake_, 4, nullptr),
            TGEMM_STATUS_INVALID_VALUE);
}

TEST_F(CApi, zero_sized_problem_is_a_no_op_even_without_a_gpu) {
  EXPECT_EQ(sgemm(0, 4, 4, 4, 4, 4), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(sgemm(4, 0, 4, 4, 1, 1), TGEMM_STATUS_SUCCESS);
}

TEST_F(CApi, valid_call_without_gpu_reports_no_device) {
  if (tgemm::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(sgemm(4, 4, 4, 4, 4, 4), TGEMM_STATUS_NO_DEVICE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("no CUDA driver/device"), std::string::npos);
  EXPECT_STREQ(tgemmGetStatusString(TGEMM_STATUS_NO_DEVICE), "TGEMM_STATUS_NO_DEVICE");
}

// Typed calls are checked before any GPU is needed: a combination nothing computes has its own
// status, a bad enum is an invalid value.
TEST_F(CApi, gemm_ex_refuses_type_combinations_and_bad_enums_by_name) {
  auto gemm_ex = [&](tgemmDataType_t a, tgemmDataType_t b, tgemmDataType_t c,
                     tgemmComputeType_t compute) {
    return tgemmGemmEx(handle_, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4, &one_, fake_, a, 4, fake_, b, 4,
                       &zero_, fake_, c, 4, compute, nullptr);
  };
  EXPECT_EQ(gemm_ex(TGEMM_R_16F, TGEMM_R_16BF, TGEMM_R_16F, TGEMM_COMPUTE_32F),
            TGEMM_STATUS_TYPE_NOT_SUPPORTED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("same element type"), std::string::npos);
  EXPECT_EQ(gemm_ex(TGEMM_R_16F, TGEMM_R_16F, TGEMM_R_16F, TGEMM_COMPUTE_32F_FAST_TF32),
            TGEMM_STATUS_TYPE_NOT_SUPPORTED);
  EXPECT_EQ(gemm_ex(TGEMM_R_32F, TGEMM_R_32F, TGEMM_R_16F, TGEMM_COMPUTE_32F),
            TGEMM_STATUS_TYPE_NOT_SUPPORTED);
  EXPECT_EQ(gemm_ex(tgemmDataType_t(9), TGEMM_R_32F, TGEMM_R_32F, TGEMM_COMPUTE_32F),
            TGEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tgemmGetLastError()).find("Atype"), std::string::npos);
  EXPECT_EQ(gemm_ex(TGEMM_R_32F, TGEMM_R_32F, TGEMM_R_32F, tgemmComputeType_t(5)),
            TGEMM_STATUS_INVALID_VALUE);
  EXPECT_STREQ(tgemmGetStatusString(TGEMM_STATUS_TYPE_NOT_SUPPORTED),
               "TGEMM_STATUS_TYPE_NOT_SUPPORTED");
  // A valid combination gets as far as the device.
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_EQ(gemm_ex(TGEMM_R_16BF, TGEMM_R_16BF, TGEMM_R_32F, TGEMM_COMPUTE_32F),
              TGEMM_STATUS_NO_DEVICE);
  }
}

TEST_F(CApi, math_mode_round_trips_and_refuses_unknown_modes) {
  tgemmMath_t mode = TGEMM_3XTF32_MATH;
  ASSERT_EQ(tgemmGetMathMode(handle_, &mode), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(mode, TGEMM_DEFAULT_MATH);
  ASSERT_EQ(tgemmSetMathMode(handle_, TGEMM_3XTF32_MATH), TGEMM_STATUS_SUCCESS);
  ASSERT_EQ(tgemmGetMathMode(handle_, &mode), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(mode, TGEMM_3XTF32_MATH);
  EXPECT_EQ(tgemmSetMathMode(handle_, tgemmMath_t(42)), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(tgemmGetMathMode(handle_, nullptr), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_EQ(tgemmSetMathMode(nullptr, TGEMM_DEFAULT_MATH), TGEMM_STATUS_NOT_INITIALIZED);
}

TEST(CppApi, bad_prepare_and_workspace_arguments_throw_tgemm_error) {
  tgemm::Handle handle(kNoDb);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.prepare("f64", 'N', 'N', 4, 4, 4, 4, 4, 4);
            }).find("types"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.prepare("f32", 'N', 'X', 4, 4, 4, 4, 4, 4);
            }).find("op_b"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.prepare("f16", 'N', 'N', 4, 4, 4, 4, 4, 4, 3);
            }).find("Aalignment must be a power of two"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.prepare("bf16", 'T', 'N', 4, 4, 4, 3, 4, 4);
            }).find("lda = 3"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.set_workspace(nullptr, 64);
            }).find("null pointer"),
            std::string::npos);
  EXPECT_NO_THROW(handle.prepare("f32", 'N', 'N', 0, 4, 4, 4, 4, 4));  // nothing to prepare
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_THROW(handle.prepare("tf32", 'N', 'T', 4, 4, 4, 4, 4, 4), tgemm::Error);
    EXPECT_THROW(handle.workspace_size(), tgemm::Error);
  }
}

TEST(CppApi, bad_arguments_throw_tgemm_error) {
  tgemm::Handle handle(kNoDb);
  float* p = reinterpret_cast<float*>(uintptr_t(1) << 20);
  EXPECT_THROW(handle.sgemm('X', 'N', 4, 4, 4, 1, p, 4, p, 4, 0, p, 4), tgemm::Error);
  EXPECT_THROW(handle.sgemm('N', 'N', 4, 4, 4, 1, p, 3, p, 4, 0, p, 4), tgemm::Error);
  EXPECT_NO_THROW(handle.sgemm('N', 'N', 0, 4, 4, 1, p, 4, p, 4, 0, p, 4));
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_THROW(handle.sgemm('N', 'N', 4, 4, 4, 1, p, 4, p, 4, 0, p, 4), tgemm::Error);
  }
}

}  // namespace
