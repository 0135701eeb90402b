// tgemmGemmEpilogueEx's and the C++ epilogue calls' argument checks and statuses; none needs a
// GPU (every bad argument is refused before the device is asked for).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "src/core/device_info.h"
#include "tgemm/tgemm.h"
#include "tgemm/tgemm_c.h"

namespace {

const char* kNoDb = "/nonexistent/dir/tgemm.db";

#define EXPECT_LAST_ERROR_HAS(part) \
  EXPECT_NE(std::string(tgemmGetLastError()).find(part), std::string::npos) << tgemmGetLastError()

class CApiEpilogue : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(tgemmCreate(&handle_, kNoDb), TGEMM_STATUS_SUCCESS); }
  void TearDown() override { EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS); }
  // An 8 x 8 x 8 bf16 GEMM (C bf16) with this epilogue.
  tgemmStatus_t call(const tgemmEpilogue_t* epilogue, tgemmHandle_t handle = nullptr) {
    return tgemmGemmEpilogueEx(handle ? handle : handle_, TGEMM_OP_N, TGEMM_OP_T, 8, 8, 8, &one_,
                               fake_, TGEMM_R_16BF, 8, fake_, TGEMM_R_16BF, 8, &zero_, fake_,
                               TGEMM_R_16BF, 8, TGEMM_COMPUTE_32F, epilogue, nullptr);
  }
  tgemmEpilogue_t bias_gelu() const {
    tgemmEpilogue_t e{};
    e.activation = TGEMM_ACTIVATION_GELU;
    e.biasAlong = TGEMM_BIAS_ALONG_N;
    e.bias = fake_;
    e.biasType = TGEMM_R_16BF;
    return e;
  }
  static inline const float one_ = 1, zero_ = 0;
  float* fake_ = reinterpret_cast<float*>(uintptr_t(1) << 20);  // never dereferenced on host
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(CApiEpilogue, a_null_epilogue_or_handle_is_refused) {
  EXPECT_EQ(call(nullptr), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("epilogue must not be null");
  const tgemmEpilogue_t e = bias_gelu();
  EXPECT_EQ(tgemmGemmEpilogueEx(nullptr, TGEMM_OP_N, TGEMM_OP_N, 8, 8, 8, &one_, fake_, TGEMM_R_32F,
                                8, fake_, TGEMM_R_32F, 8, &zero_, fake_, TGEMM_R_32F, 8,
                                TGEMM_COMPUTE_32F, &e, nullptr),
            TGEMM_STATUS_NOT_INITIALIZED);
}

TEST_F(CApiEpilogue, unknown_enum_values_are_invalid_and_named) {
  tgemmEpilogue_t e = bias_gelu();
  e.activation = tgemmActivation_t(9);
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("epilogue->activation must be");
  e = bias_gelu();
  e.biasAlong = tgemmBiasAlong_t(-1);
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("epilogue->biasAlong must be");
  e = bias_gelu();
  e.biasType = tgemmDataType_t(7);
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("biasType must be");
}

TEST_F(CApiEpilogue, a_missing_or_stray_bias_pointer_is_invalid) {
  tgemmEpilogue_t e = bias_gelu();
  e.bias = nullptr;
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("adds a bias, but the bias pointer is null");
  e = bias_gelu();
  e.biasAlong = TGEMM_BIAS_NONE;
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("a bias pointer is given but");
}

TEST_F(CApiEpilogue, a_bias_type_neither_c_nor_f32_is_invalid) {
  tgemmEpilogue_t e = bias_gelu();
  e.biasType = TGEMM_R_16F;
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("the bias type f16 is neither C's type (bf16) nor f32");
}

TEST_F(CApiEpilogue, aux_without_an_activation_and_short_leading_dimensions_are_invalid) {
  tgemmEpilogue_t e = bias_gelu();
  e.activation = TGEMM_ACTIVATION_NONE;
  e.aux = fake_;
  e.ldaux = 8;
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("aux keeps the values before the activation");
  e = bias_gelu();
  e.aux = fake_;
  e.ldaux = 7;
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("ldaux = 7 is smaller than the row length of aux (8)");
  e = bias_gelu();
  e.D = fake_ + 1024;
  e.ldd = 4;
  EXPECT_EQ(call(&e), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("ldd = 4 is smaller than the row length of D (8)");
}

TEST_F(CApiEpilogue, a_valid_call_reaches_the_device) {
  const tgemmEpilogue_t e = bias_gelu();
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_EQ(call(&e), TGEMM_STATUS_NO_DEVICE);
    EXPECT_EQ(std::string(tgemmGetLastError()).find("epilogue"), std::string::npos);
  }
}

TEST(CppEpilogue, bad_arguments_throw_naming_them) {
  tgemm::Handle handle(kNoDb);
  float* fake = reinterpret_cast<float*>(uintptr_t(1) << 20);
  tgemm::GemmEpilogue e;
  e.activation = tgemm::GemmEpilogue::Activation::relu;
  e.bias_along = tgemm::GemmEpilogue::BiasAlong::m;  // without a bias pointer
  try {
    handle.gemm('N', 'N', 8, 8, 8, 1.0f, fake, 8, fake, 8, 0.0f, fake, 8, e);
    FAIL() << "no error";
  } catch (const tgemm::Error& error) {
    EXPECT_NE(std::string(error.what()).find("bias pointer is null"), std::string::npos)
        << error.what();
  }
}

}  // namespace
