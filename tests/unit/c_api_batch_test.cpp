// The batched C and C++ calls' argument checks and statuses; none of these needs a GPU (every
// bad argument is refused before the device is asked for).
#include <gtest/gtest.h>

#include <string>

#include "src/core/device_info.h"
#include "tests/common/thrown_message.h"
#include "tgemm/tgemm.h"
#include "tgemm/tgemm_c.h"

namespace {

const char* kNoDb = "/nonexistent/dir/tgemm.db";

#define EXPECT_LAST_ERROR_HAS(part) \
  EXPECT_NE(std::string(tgemmGetLastError()).find(part), std::string::npos) << tgemmGetLastError()

class CApiBatch : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(tgemmCreate(&handle_, kNoDb), TGEMM_STATUS_SUCCESS); }
  void TearDown() override { EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS); }
  // A 4 x 4 x 4 f32 strided batch with these strides and count.
  tgemmStatus_t strided(long long stride_a, long long stride_b, long long stride_c, int batch,
                        tgemmHandle_t handle = nullptr) {
    return tgemmGemmStridedBatchedEx(handle ? handle : handle_, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4,
                                     &one_, fake_, TGEMM_R_32F, 4, stride_a, fake_, TGEMM_R_32F, 4,
                                     stride_b, &zero_, fake_, TGEMM_R_32F, 4, stride_c, batch,
                                     TGEMM_COMPUTE_32F, nullptr);
  }
  tgemmStatus_t pointers(const void* const* a, const void* const* b, void* const* c, int batch) {
    return tgemmGemmBatchedEx(handle_, TGEMM_OP_N, TGEMM_OP_T, 4, 4, 4, &one_, a, TGEMM_R_16F, 4, b,
                              TGEMM_R_16F, 4, &zero_, c, TGEMM_R_16F, 4, batch, TGEMM_COMPUTE_32F,
                              nullptr);
  }
  static inline const float one_ = 1, zero_ = 0;
  float* fake_ = reinterpret_cast<float*>(uintptr_t(1) << 20);  // never dereferenced on host
  void** fake_array_ = reinterpret_cast<void**>(uintptr_t(1) << 21);
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(CApiBatch, a_negative_batch_count_is_invalid_and_named) {
  EXPECT_EQ(strided(16, 16, 16, -1), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("batchCount must be >= 0, got -1");
  EXPECT_EQ(pointers(fake_array_, fake_array_, fake_array_, -4), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("batchCount must be >= 0, got -4");
}

TEST_F(CApiBatch, a_stride_c_that_overlaps_members_of_c_is_invalid) {
  EXPECT_EQ(strided(16, 16, 15, 2), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("strideC = 15 is smaller than one member of C (16 elements");
  EXPECT_EQ(strided(16, 16, 0, 3), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("overlap");
}

TEST_F(CApiBatch, a_negative_stride_of_a_or_b_is_invalid_but_zero_shares_the_operand) {
  EXPECT_EQ(strided(-16, 16, 16, 2), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("strideA and strideB must be >= 0");
  // Stride 0 for A and B (one operand for every member) passes the checks: then the device.
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_EQ(strided(0, 0, 16, 2), TGEMM_STATUS_NO_DEVICE);
  }
}

TEST_F(CApiBatch, strides_of_a_single_member_are_never_checked_as_cublas_ignores_them) {
  if (tgemm::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(strided(-1, -1, 0, 1), TGEMM_STATUS_NO_DEVICE);
}

TEST_F(CApiBatch, a_batch_of_zero_or_an_empty_shape_does_nothing_without_a_gpu) {
  EXPECT_EQ(strided(16, 16, 16, 0), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(pointers(nullptr, nullptr, nullptr, 0), TGEMM_STATUS_SUCCESS);
}

TEST_F(CApiBatch, too_many_members_are_not_supported) {
  EXPECT_EQ(strided(16, 16, 16, 65536), TGEMM_STATUS_NOT_SUPPORTED);
  EXPECT_LAST_ERROR_HAS("batchCount = 65536");
}

TEST_F(CApiBatch, a_null_pointer_array_is_invalid_and_named) {
  EXPECT_EQ(pointers(nullptr, fake_array_, fake_array_, 2), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("Aarray or Barray is a null pointer");
  EXPECT_EQ(pointers(fake_array_, fake_array_, nullptr, 2), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("Carray is a null pointer");
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_EQ(pointers(fake_array_, fake_array_, fake_array_, 2), TGEMM_STATUS_NO_DEVICE);
  }
}

TEST_F(CApiBatch, a_null_or_destroyed_handle_is_not_initialized) {
  tgemmHandle_t other = nullptr;
  ASSERT_EQ(tgemmCreate(&other, kNoDb), TGEMM_STATUS_SUCCESS);
  ASSERT_EQ(tgemmDestroy(other), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(strided(16, 16, 16, 2, other), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_LAST_ERROR_HAS("tgemmGemmStridedBatchedEx");
  EXPECT_EQ(tgemmGemmBatchedEx(nullptr, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4, &one_, nullptr,
                               TGEMM_R_32F, 4, nullptr, TGEMM_R_32F, 4, &zero_, nullptr,
                               TGEMM_R_32F, 4, 2, TGEMM_COMPUTE_32F, nullptr),
            TGEMM_STATUS_NOT_INITIALIZED);
}

TEST(CppApiBatch, bad_batches_throw_tgemm_error_naming_the_argument) {
  tgemm::Handle handle(kNoDb);
  float* fake = reinterpret_cast<float*>(uintptr_t(1) << 20);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_strided_batched('N', 'N', 4, 4, 4, 1.0f, fake, 4, 16, fake, 4, 16, 0.0f,
                                          fake, 4, 8, 2);
            }).find("strideC = 8"),
            std::string::npos);
  const float* const* null_array = nullptr;
  float* const* c_array = reinterpret_cast<float* const*>(fake);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_batched('N', 'N', 4, 4, 4, 1.0f, null_array, 4, null_array, 4, 0.0f,
                                  c_array, 4, 3);
            }).find("Aarray or Barray is a null pointer"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_batched('N', 'N', 4, 4, 4, 1.0f, null_array, 4, null_array, 4, 0.0f,
                                  c_array, 4, -1);
            }).find("batchCount must be >= 0"),
            std::string::npos);
}

}  // namespace
