// tgemmPrepare, tgemmSetWorkspace and tgemmGetWorkspaceSize refuse bad input by name before a
// GPU is needed, and the statuses of CUDA graph capture have their names. No GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "src/core/device_info.h"
#include "tgemm/tgemm_c.h"

namespace {

const char* kNoDb = "/nonexistent/dir/tgemm.db";

// tgemmSgemm's 64^3 NN problem, packed.
tgemmProblem_t sgemm_problem() {
  tgemmProblem_t p = {};
  p.op_a = p.op_b = TGEMM_OP_N;
  p.m = p.n = p.k = 64;
  p.lda = p.ldb = p.ldc = 64;
  p.Atype = p.Btype = p.Ctype = TGEMM_R_32F;
  p.computeType = TGEMM_COMPUTE_32F;
  return p;
}

bool last_error_has(const std::string& text) {
  return std::string(tgemmGetLastError()).find(text) != std::string::npos;
}

class CApiPrepare : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(tgemmCreate(&handle_, kNoDb), TGEMM_STATUS_SUCCESS); }
  void TearDown() override { EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS); }
  // Prepares {good, bad} and expects `status` with `text` in the message (naming problems[1]).
  void expect_refused(const tgemmProblem_t& bad, tgemmStatus_t status, const std::string& text) {
    const tgemmProblem_t problems[] = {sgemm_problem(), bad};
    EXPECT_EQ(tgemmPrepare(handle_, problems, 2), status) << tgemmGetLastError();
    EXPECT_TRUE(last_error_has("problems[1]")) << tgemmGetLastError();
    EXPECT_TRUE(last_error_has(text)) << tgemmGetLastError();
  }
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(CApiPrepare, count_and_array_are_checked) {
  const tgemmProblem_t p = sgemm_problem();
  EXPECT_EQ(tgemmPrepare(handle_, &p, -1), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_TRUE(last_error_has("count = -1")) << tgemmGetLastError();
  EXPECT_EQ(tgemmPrepare(handle_, nullptr, 1), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_TRUE(last_error_has("problems is a null pointer")) << tgemmGetLastError();
  // Nothing to prepare needs no GPU.
  EXPECT_EQ(tgemmPrepare(handle_, nullptr, 0), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(std::string(tgemmGetLastError()), "");
}

TEST_F(CApiPrepare, each_bad_field_is_refused_naming_the_problem) {
  tgemmProblem_t p = sgemm_problem();
  p.op_a = tgemmOperation_t(3);
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "op_a and op_b");
  p = sgemm_problem();
  p.Btype = tgemmDataType_t(12);
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "Btype");
  p = sgemm_problem();
  p.computeType = tgemmComputeType_t(-1);
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "computeType");
  p = sgemm_problem();
  p.Atype = p.Btype = TGEMM_R_16F;  // f16 inputs with tf32 compute: nothing computes it
  p.computeType = TGEMM_COMPUTE_32F_FAST_TF32;
  expect_refused(p, TGEMM_STATUS_TYPE_NOT_SUPPORTED, "types");
  p = sgemm_problem();
  p.k = -5;
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "k=-5");
  p = sgemm_problem();
  p.lda = 63;
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "lda = 63");
  p = sgemm_problem();
  p.ldc = 0;
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "ldc = 0");
  p = sgemm_problem();
  p.Balignment = 12;
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "Balignment must be a power of two");
  p = sgemm_problem();
  p.Calignment = -16;
  expect_refused(p, TGEMM_STATUS_INVALID_VALUE, "Calignment = -16 is negative");
}

TEST_F(CApiPrepare, empty_problems_are_nothing_to_prepare) {
  tgemmProblem_t p = sgemm_problem();
  p.m = 0;
  EXPECT_EQ(tgemmPrepare(handle_, &p, 1), TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
}

TEST_F(CApiPrepare, valid_problems_without_a_gpu_report_no_device) {
  if (tgemm::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  tgemmProblem_t problems[] = {sgemm_problem(), sgemm_problem()};
  problems[1].Atype = problems[1].Btype = TGEMM_R_16BF;
  problems[1].Aalignment = 2;
  EXPECT_EQ(tgemmPrepare(handle_, problems, 2), TGEMM_STATUS_NO_DEVICE);
  size_t bytes = 1;
  EXPECT_EQ(tgemmGetWorkspaceSize(handle_, &bytes), TGEMM_STATUS_NO_DEVICE);
}

TEST_F(CApiPrepare, set_workspace_refuses_inconsistent_buffers) {
  EXPECT_EQ(tgemmSetWorkspace(handle_, nullptr, 1024), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_TRUE(last_error_has("null pointer but bytes is 1024")) << tgemmGetLastError();
  void* fake = reinterpret_cast<void*>(uintptr_t(1) << 20);
  EXPECT_EQ(tgemmSetWorkspace(handle_, fake, 0), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_TRUE(last_error_has("bytes is 0")) << tgemmGetLastError();
  void* misaligned = reinterpret_cast<void*>((uintptr_t(1) << 20) + 16);
  EXPECT_EQ(tgemmSetWorkspace(handle_, misaligned, 4096), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_TRUE(last_error_has("256-byte aligned")) << tgemmGetLastError();
  EXPECT_EQ(tgemmGetWorkspaceSize(handle_, nullptr), TGEMM_STATUS_INVALID_VALUE);
  if (tgemm::cuda_device_count() == 0) {
    EXPECT_EQ(tgemmSetWorkspace(handle_, fake, 4096), TGEMM_STATUS_NO_DEVICE);
    EXPECT_EQ(tgemmSetWorkspace(handle_, nullptr, 0), TGEMM_STATUS_NO_DEVICE);
  }
}

TEST(CApiStatus, capture_statuses_have_their_names) {
  EXPECT_STREQ(tgemmGetStatusString(TGEMM_STATUS_NOT_PREPARED), "TGEMM_STATUS_NOT_PREPARED");
  EXPECT_STREQ(tgemmGetStatusString(TGEMM_STATUS_WORKSPACE_TOO_SMALL),
               "TGEMM_STATUS_WORKSPACE_TOO_SMALL");
  EXPECT_STREQ(tgemmGetStatusString(tgemmStatus_t(10)), "unknown tgemmStatus_t");
}

}  // namespace
