// The grouped C and C++ calls' argument checks and statuses; none of these needs a GPU (every
// bad argument is refused before the device is asked for).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/core/device_info.h"
#include "tests/common/thrown_message.h"
#include "tgemm/tgemm.h"
#include "tgemm/tgemm_c.h"

namespace {

const char* kNoDb = "/nonexistent/dir/tgemm.db";

#define EXPECT_LAST_ERROR_HAS(part) \
  EXPECT_NE(std::string(tgemmGetLastError()).find(part), std::string::npos) << tgemmGetLastError()

// The per-group host arrays of a call, two groups of 8 x 8 x 8 f16 NN problems to start from.
struct Groups {
  std::vector<tgemmOperation_t> op_a{TGEMM_OP_N, TGEMM_OP_N}, op_b{TGEMM_OP_N, TGEMM_OP_N};
  std::vector<int> m{8, 8}, n{8, 8}, k{8, 8}, lda{8, 8}, ldb{8, 8}, ldc{8, 8}, size{1, 2};
  std::vector<float> alpha{1, 1}, beta{0, 0};
};

class CApiGrouped : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(tgemmCreate(&handle_, kNoDb), TGEMM_STATUS_SUCCESS); }
  void TearDown() override { EXPECT_EQ(tgemmDestroy(handle_), TGEMM_STATUS_SUCCESS); }
  tgemmStatus_t call(const Groups& g, int count, const void* const* a, const void* const* b,
                     void* const* c, tgemmHandle_t handle = nullptr) {
    return tgemmGemmGroupedBatchedEx(
        handle ? handle : handle_, g.op_a.data(), g.op_b.data(), g.m.data(), g.n.data(), g.k.data(),
        g.alpha.data(), a, TGEMM_R_16F, g.lda.data(), b, TGEMM_R_16F, g.ldb.data(), g.beta.data(),
        c, TGEMM_R_16F, g.ldc.data(), count, g.size.data(), TGEMM_COMPUTE_32F, nullptr);
  }
  tgemmStatus_t call(const Groups& g) { return call(g, 2, fake_, fake_, fake_); }
  void* const* fake_ = reinterpret_cast<void* const*>(uintptr_t(1) << 21);  // never read on host
  tgemmHandle_t handle_ = nullptr;
};

TEST_F(CApiGrouped, a_negative_group_count_is_invalid) {
  EXPECT_EQ(call(Groups{}, -1, fake_, fake_, fake_), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("group_count = -1 is negative");
}

TEST_F(CApiGrouped, no_groups_or_groups_without_work_do_nothing_without_a_gpu) {
  EXPECT_EQ(tgemmGemmGroupedBatchedEx(handle_, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr, TGEMM_R_16F, nullptr, nullptr, TGEMM_R_16F, nullptr,
                                      nullptr, nullptr, TGEMM_R_16F, nullptr, 0, nullptr,
                                      TGEMM_COMPUTE_32F, nullptr),
            TGEMM_STATUS_SUCCESS)
      << tgemmGetLastError();
  Groups empty;
  empty.m = {0, 8};
  empty.size = {3, 0};
  EXPECT_EQ(call(empty, 2, nullptr, nullptr, nullptr), TGEMM_STATUS_SUCCESS) << tgemmGetLastError();
}

TEST_F(CApiGrouped, a_null_host_array_is_invalid) {
  const Groups g;
  EXPECT_EQ(
      tgemmGemmGroupedBatchedEx(handle_, g.op_a.data(), g.op_b.data(), g.m.data(), g.n.data(),
                                g.k.data(), g.alpha.data(), fake_, TGEMM_R_16F, g.lda.data(), fake_,
                                TGEMM_R_16F, nullptr, g.beta.data(), fake_, TGEMM_R_16F,
                                g.ldc.data(), 2, g.size.data(), TGEMM_COMPUTE_32F, nullptr),
      TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("ldb_array");
  EXPECT_LAST_ERROR_HAS("must not be null");
}

TEST_F(CApiGrouped, an_unknown_op_is_invalid_and_names_its_group) {
  Groups g;
  g.op_b[1] = tgemmOperation_t(7);
  EXPECT_EQ(call(g), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("op_a_array[1] and op_b_array[1] must be TGEMM_OP_N or TGEMM_OP_T");
}

TEST_F(CApiGrouped, negative_sizes_and_group_sizes_are_invalid_and_named) {
  Groups g;
  g.k[1] = -8;
  EXPECT_EQ(call(g), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("group 1: m, n and k must be >= 0");
  g = Groups{};
  g.size[0] = -1;
  EXPECT_EQ(call(g), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("group_size[0] = -1 is negative");
}

TEST_F(CApiGrouped, a_leading_dimension_below_its_row_length_is_invalid_and_named) {
  Groups g;
  g.op_a[0] = TGEMM_OP_T;  // A stored k x m: rows of m = 16
  g.m[0] = 16;
  g.ldc[0] = 8;
  EXPECT_EQ(call(g), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("group 0: lda = 8 is smaller than the row length of A (16)");
}

TEST_F(CApiGrouped, a_null_pointer_array_with_work_is_invalid_and_named) {
  EXPECT_EQ(call(Groups{}, 2, fake_, fake_, nullptr), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("Carray is a null pointer");
  EXPECT_EQ(call(Groups{}, 2, nullptr, fake_, fake_), TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("Aarray or Barray is a null pointer");
}

TEST_F(CApiGrouped, bad_types_are_refused_before_the_device) {
  const Groups g;
  EXPECT_EQ(
      tgemmGemmGroupedBatchedEx(handle_, g.op_a.data(), g.op_b.data(), g.m.data(), g.n.data(),
                                g.k.data(), g.alpha.data(), fake_, tgemmDataType_t(9), g.lda.data(),
                                fake_, TGEMM_R_16F, g.ldb.data(), g.beta.data(), fake_, TGEMM_R_16F,
                                g.ldc.data(), 2, g.size.data(), TGEMM_COMPUTE_32F, nullptr),
      TGEMM_STATUS_INVALID_VALUE);
  EXPECT_LAST_ERROR_HAS("Atype must be");
  EXPECT_EQ(
      tgemmGemmGroupedBatchedEx(handle_, g.op_a.data(), g.op_b.data(), g.m.data(), g.n.data(),
                                g.k.data(), g.alpha.data(), fake_, TGEMM_R_16F, g.lda.data(), fake_,
                                TGEMM_R_32F, g.ldb.data(), g.beta.data(), fake_, TGEMM_R_16F,
                                g.ldc.data(), 2, g.size.data(), TGEMM_COMPUTE_32F, nullptr),
      TGEMM_STATUS_TYPE_NOT_SUPPORTED);
}

TEST_F(CApiGrouped, a_valid_call_without_a_gpu_is_no_device) {
  if (tgemm::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(call(Groups{}), TGEMM_STATUS_NO_DEVICE);
}

TEST_F(CApiGrouped, a_null_or_destroyed_handle_is_not_initialized) {
  tgemmHandle_t other = nullptr;
  ASSERT_EQ(tgemmCreate(&other, kNoDb), TGEMM_STATUS_SUCCESS);
  ASSERT_EQ(tgemmDestroy(other), TGEMM_STATUS_SUCCESS);
  EXPECT_EQ(call(Groups{}, 2, fake_, fake_, fake_, other), TGEMM_STATUS_NOT_INITIALIZED);
  EXPECT_LAST_ERROR_HAS("tgemmGemmGroupedBatchedEx");
}

TEST(CppApiGrouped, bad_groups_throw_tgemm_error_naming_the_group) {
  tgemm::Handle handle(kNoDb);
  const __half* const* a = reinterpret_cast<const __half* const*>(uintptr_t(1) << 20);
  __half* const* c = reinterpret_cast<__half* const*>(uintptr_t(1) << 21);
  std::vector<tgemm::GemmGroup> groups(2);
  for (tgemm::GemmGroup& g : groups) g = {'N', 'T', 8, 8, 8, 1.0f, 0.0f, 8, 8, 8, 1};
  groups[1].op_b = 'X';
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_grouped_batched(groups.data(), 2, a, a, c);
            }).find("groups[1].op_b must be 'N' or 'T'"),
            std::string::npos);
  groups[1].op_b = 'T';
  groups[1].ldc = 4;
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_grouped_batched(groups.data(), 2, a, a, c);
            }).find("group 1: ldc = 4 is smaller than the row length of C (8)"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_grouped_batched(nullptr, 3, a, a, c);
            }).find("groups is a null pointer"),
            std::string::npos);
  EXPECT_NE(tgemm::testing::thrown_message([&] {
              handle.gemm_grouped_batched(groups.data(), -2, a, a, c);
            }).find("group_count = -2 is negative"),
            std::string::npos);
}

}  // namespace
