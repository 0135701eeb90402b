// The C API's handle promises: a null or destroyed handle is TGEMM_STATUS_NOT_INITIALIZED
// from every function that takes one (never a crash), and every failure sets
// tgemmGetLastError while every success clears it. None of these needs a GPU.
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <thread>
#include <vector>

#include "tgemm/tgemm_c.h"

namespace {

const char* kNoDb = "/nonexistent/dir/tgemm.db";
const float kOne = 1, kZero = 0;
float* const kFake = reinterpret_cast<float*>(uintptr_t(1) << 20);  // never dereferenced

// Every C function that takes a handle, called with `h`; their statuses in this order:
// Sgemm, GemmEx, SetMathMode, GetMathMode, SetCublasFallback, GetSelection, Prepare,
// SetWorkspace, GetWorkspaceSize.
std::vector<tgemmStatus_t> call_everything(tgemmHandle_t h) {
  tgemmMath_t mode = TGEMM_DEFAULT_MATH;
  tgemmSelection_t selection = TGEMM_SELECTION_EXACT;
  tgemmProblem_t problem = {};
  problem.m = problem.n = problem.k = problem.lda = problem.ldb = problem.ldc = 4;
  size_t bytes = 0;
  return {
      tgemmSgemm(h, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4, &kOne, kFake, 4, kFake, 4, &kZero, kFake, 4,
                 nullptr),
      tgemmGemmEx(h, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4, &kOne, kFake, TGEMM_R_32F, 4, kFake,
                  TGEMM_R_32F, 4, &kZero, kFake, TGEMM_R_32F, 4, TGEMM_COMPUTE_32F, nullptr),
      tgemmSetMathMode(h, TGEMM_DEFAULT_MATH),
      tgemmGetMathMode(h, &mode),
      tgemmSetCublasFallback(h, 1),
      tgemmGetSelection(h, TGEMM_OP_N, TGEMM_OP_N, 4, 4, 4, kFake, 4, kFake, 4, kFake, 4,
                        &selection),
      tgemmPrepare(h, &problem, 1),
      tgemmSetWorkspace(h, nullptr, 0),
      tgemmGetWorkspaceSize(h, &bytes),
  };
}

const char* const kNames[] = {"tgemmSgemm",
                              "tgemmGemmEx",
                              "tgemmSetMathMode",
                              "tgemmGetMathMode",
                              "tgemmSetCublasFallback",
                              "tgemmGetSelection",
                              "tgemmPrepare",
                              "tgemmSetWorkspace",
                              "tgemmGetWorkspaceSize"};

// Makes the last error non-empty with a failure that has nothing to do with handles.
void set_unrelated_error() {
  ASSERT_EQ(tgemmCreate(nullptr, kNoDb), TGEMM_STATUS_INVALID_VALUE);
  ASSERT_NE(std::string(tgemmGetLastError()), "");
}

TEST(CApiHandle, destroyed_handle_is_not_initialized_in_every_call) {
  tgemmHandle_t h = nullptr;
  ASSERT_EQ(tgemmCreate(&h, kNoDb), TGEMM_STATUS_SUCCESS);
  ASSERT_EQ(tgemmDestroy(h), TGEMM_STATUS_SUCCESS);
  const std::vector<tgemmStatus_t> statuses = call_everything(h);
  for (size_t i = 0; i < statuses.size(); ++i)
    EXPECT_EQ(statuses[i], TGEMM_STATUS_NOT_INITIALIZED) << kNames[i];
}

TEST(CApiHandle, double_destroy_is_not_initialized) {
  tgemmHandle_t h = nullptr;
  ASSERT_EQ(tgemmCreate(&h, kNoDb), TGEMM_STATUS_SUCCESS);
  ASSERT_EQ(tgemmDestroy(h), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("tgemmDestroy"), std::string::npos)
      << tgemmGetLastError();
}

TEST(CApiHandle, destroyed_handle_stays_dead_when_a_new_one_is_created) {
  // A fresh handle must not bring a destroyed one back, even if memory is reused.
  tgemmHandle_t old = nullptr;
  ASSERT_EQ(tgemmCreate(&old, kNoDb), TGEMM_STATUS_SUCCESS);
  ASSERT_EQ(tgemmDestroy(old), TGEMM_STATUS_SUCCESS);
  std::vector<tgemmHandle_t> fresh(8);
  for (auto& h : fresh) ASSERT_EQ(tgemmCreate(&h, kNoDb), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(tgemmSetCublasFallback(old, 0), TGEMM_STATUS_NOT_INITIALIZED);
  for (auto h : fresh) {
    EXPECT_NE(h, old);
    EXPECT_EQ(tgemmSetCublasFallback(h, 1), TGEMM_STATUS_SUCCESS);
    EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_SUCCESS);
  }
}

TEST(CApiHandle, a_pointer_that_was_never_a_handle_is_not_initialized) {
  int not_a_handle = 0;
  auto h = reinterpret_cast<tgemmHandle_t>(&not_a_handle);
  for (tgemmStatus_t s : call_everything(h)) EXPECT_EQ(s, TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_NOT_INITIALIZED);
}

TEST(CApiHandle, null_handle_failures_set_the_last_error_naming_the_function) {
  const std::vector<tgemmStatus_t> statuses = call_everything(nullptr);
  for (size_t i = 0; i < statuses.size(); ++i)
    EXPECT_EQ(statuses[i], TGEMM_STATUS_NOT_INITIALIZED) << kNames[i];
  set_unrelated_error();
  EXPECT_EQ(tgemmDestroy(nullptr), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("tgemmDestroy: null handle"), std::string::npos)
      << tgemmGetLastError();
  set_unrelated_error();
  EXPECT_EQ(tgemmSetCublasFallback(nullptr, 1), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("tgemmSetCublasFallback: null handle"),
            std::string::npos)
      << tgemmGetLastError();
  set_unrelated_error();
  EXPECT_EQ(call_everything(nullptr).back(), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("tgemmGetWorkspaceSize: null handle"),
            std::string::npos)
      << tgemmGetLastError();
  set_unrelated_error();
  EXPECT_EQ(tgemmPrepare(nullptr, nullptr, 0), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("tgemmPrepare: null handle"), std::string::npos)
      << tgemmGetLastError();
  set_unrelated_error();
  tgemmMath_t mode;
  EXPECT_EQ(tgemmGetMathMode(nullptr, &mode), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(tgemmGetLastError()).find("tgemmGetMathMode: null handle"),
            std::string::npos)
      << tgemmGetLastError();
}

TEST(CApiHandle, successful_handle_calls_clear_the_last_error) {
  tgemmHandle_t h = nullptr;
  ASSERT_EQ(tgemmCreate(&h, kNoDb), TGEMM_STATUS_SUCCESS);
  set_unrelated_error();
  EXPECT_EQ(tgemmSetCublasFallback(h, 1), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(std::string(tgemmGetLastError()), "");
  tgemmMath_t mode;
  set_unrelated_error();
  EXPECT_EQ(tgemmGetMathMode(h, &mode), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(std::string(tgemmGetLastError()), "");
  set_unrelated_error();
  EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(std::string(tgemmGetLastError()), "");
}

TEST(CApiHandle, destroy_while_other_threads_call_never_crashes) {
  // Calls racing a destroy either run on the live handle or see NOT_INITIALIZED.
  for (int round = 0; round < 20; ++round) {
    tgemmHandle_t h = nullptr;
    ASSERT_EQ(tgemmCreate(&h, kNoDb), TGEMM_STATUS_SUCCESS);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([h] {
        for (int i = 0; i < 50; ++i) {
          tgemmMath_t mode;
          const tgemmStatus_t s = tgemmGetMathMode(h, &mode);
          EXPECT_TRUE(s == TGEMM_STATUS_SUCCESS || s == TGEMM_STATUS_NOT_INITIALIZED) << s;
        }
      });
    EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_SUCCESS);
    for (auto& t : threads) t.join();
    EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_NOT_INITIALIZED);
  }
}

}  // namespace
