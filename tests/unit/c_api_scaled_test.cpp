// tgemmGemmScaledEx's and the FP8 types' argument checks and statuses; none needs a GPU (every
// bad argument is refused before the device is asked for).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "src/cuda/cublaslt_gemm.h"
#include "tgemm/tgemm.h"
#include "tgemm/tgemm_c.h"

namespace {

#define EXPECT_LAST_ERROR_HAS(part) \
  EXPECT_NE(std::string(tgemmGetLastError()).find(part), std::string::npos) << tgemmGetLastError()

class CApiScaled : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tgemmCreate(&handle_, "/nonexistent/dir/tgemm.db"), TGEMM_STATUS_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS); }
  // A 16 x 16 x 16 NT GEMM of inputs `in` into C of `out` with these scales.
  tgemmStatus_t call(tgemmDataType_t in, tgemmDataType_t out, const tgemmScales_t* scales) {
    return tgemmGemmScaledEx(handle_, TGEMM_OP_N, TGEMM_OP_T, 16, 16, 16, &one_, fake_, in, 16,
                             fake_, in, 16, &zero_, fake_, out, 16, TGEMM_COMPUTE_32F, scales,
                             nullptr, nullptr);
  }
  static inline const float one_ = 1, zero_ = 0;
  float* fake_ = reinterpret_cast<float*>(uintptr_t(1) << 20);  // never dereferenced on host
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(CApiScaled, null_scales_or_a_null_scale_pointer_are_invalid) {
  EXPECT_EQ(call(TGEMM_R_8F_E4M3, TGEMM_R_16BF, nullptr), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("scales, scales->scaleA and scales->scaleB must not be null");
  const tgemmScales_t half = {fake_, nullptr, TGEMM_SCALE_TENSOR};
  EXPECT_EQ(call(TGEMM_R_8F_E5M2, TGEMM_R_32F, &half), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("must not be null");
}

TEST_F(CApiScaled, an_unknown_scale_mode_is_invalid) {
  const tgemmScales_t scales = {fake_, fake_, tgemmScaleMode_t(2)};
  EXPECT_EQ(call(TGEMM_R_8F_E4M3, TGEMM_R_16BF, &scales), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("scales->mode = 2 is neither TGEMM_SCALE_TENSOR nor TGEMM_SCALE_ROWWISE");
}

TEST_F(CApiScaled, scales_on_types_that_are_not_fp8_are_invalid) {
  const tgemmScales_t scales = {fake_, fake_, TGEMM_SCALE_TENSOR};
  EXPECT_EQ(call(TGEMM_R_16BF, TGEMM_R_16BF, &scales), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("scales apply to FP8 inputs");
  EXPECT_LAST_ERROR_HAS("not bf16");
}

TEST_F(CApiScaled, fp8_into_fp8_and_unknown_type_codes_are_refused) {
  const tgemmScales_t scales = {fake_, fake_, TGEMM_SCALE_TENSOR};
  EXPECT_EQ(call(TGEMM_R_8F_E4M3, TGEMM_R_8F_E4M3, &scales), TGEMM_STATUS_TYPE_NOT_SUPPORTED);
  EXPECT_LAST_ERROR_HAS("C of an FP8 GEMM is bf16, f16 or f32");
  EXPECT_EQ(call(tgemmDataType_t(5), TGEMM_R_16BF, &scales), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("TGEMM_R_8F_E4M3 or TGEMM_R_8F_E5M2");
}

TEST_F(CApiScaled, a_null_handle_is_not_initialized) {
  const tgemmScales_t scales = {fake_, fake_, TGEMM_SCALE_TENSOR};
  EXPECT_EQ(tgemmGemmScaledEx(nullptr, TGEMM_OP_N, TGEMM_OP_T, 16, 16, 16, &one_, fake_,
                              TGEMM_R_8F_E4M3, 16, fake_, TGEMM_R_8F_E4M3, 16, &zero_, fake_,
                              TGEMM_R_16BF, 16, TGEMM_COMPUTE_32F, &scales, nullptr, nullptr),
            TGEMM_STATUS_NOT_INITIALIZED);
}

}  // namespace

// Where cuBLASLt serves an FP8 call, its scale pointers must be 16-byte aligned; null ones
// (scales of 1) always do.
TEST(LtScales, only_16_byte_aligned_or_null_scale_pointers_pass) {
  const auto at = [](uintptr_t address) { return reinterpret_cast<const float*>(address); };
  tgemm::GemmCall call;
  EXPECT_TRUE(tgemm::lt_scales_aligned(call));
  call.scale_a = at(1 << 20);
  call.scale_b = at((1 << 20) + 16);
  EXPECT_TRUE(tgemm::lt_scales_aligned(call));
  call.scale_b = at((1 << 20) + 4);
  EXPECT_FALSE(tgemm::lt_scales_aligned(call));
  call.scale_a = at((1 << 20) + 8);
  call.scale_b = nullptr;
  EXPECT_FALSE(tgemm::lt_scales_aligned(call));
}

// The C++ call takes a null scale as 1 per tensor, but rowwise scales need both vectors.
TEST(CppScaled, rowwise_scales_with_a_null_pointer_throw_naming_it) {
  tgemm::Handle handle("/nonexistent/dir/tgemm.db");
  const auto* fake = reinterpret_cast<const __nv_fp8_e4m3*>(uintptr_t(1) << 20);
  auto* c = reinterpret_cast<__nv_bfloat16*>(uintptr_t(1) << 21);
  const float* scales = reinterpret_cast<const float*>(uintptr_t(1) << 22);
  try {
    handle.gemm_fp8('N', 'T', 16, 16, 16, 1.0f, fake, 16, scales, fake, 16, nullptr, 0.0f, c, 16,
                    tgemm::Handle::ScaleMode::rowwise);
    FAIL() << "no error";
  } catch (const tgemm::Error& error) {
    EXPECT_NE(std::string(error.what()).find("rowwise scales need both scale pointers"),
              std::string::npos)
        << error.what();
  }
}
