// The kernels index m, n, k and the leading dimensions with 32-bit ints: 2^31 - 1 is the
// largest value accepted, 2^31 is refused with a message naming the field, in
// Problem::validate, the shape reader and the C API.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/core/error.h"
#include "src/core/problem.h"
#include "tgemm/tgemm_c.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kIntMax = INT32_MAX;    // 2^31 - 1
constexpr int64_t kTooBig = kIntMax + 1;  // 2^31

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

std::string validate_error(const Problem& p) {
  try {
    p.validate();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IndexLimits, validate_accepts_dimensions_of_2_pow_31_minus_1) {
  for (int which = 0; which < 3; ++which) {
    const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, which == 0 ? kIntMax : 1,
                                      which == 1 ? kIntMax : 1, which == 2 ? kIntMax : 1);
    EXPECT_EQ(validate_error(p), "") << which;
  }
}

TEST(IndexLimits, validate_rejects_dimensions_of_2_pow_31_naming_them) {
  const char* names[] = {"m", "n", "k"};
  for (int which = 0; which < 3; ++which) {
    const Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, which == 0 ? kTooBig : 1,
                                      which == 1 ? kTooBig : 1, which == 2 ? kTooBig : 1);
    const std::string msg = validate_error(p);
    EXPECT_HAS(msg, std::string(names[which]) + " = 2147483648");
    EXPECT_HAS(msg, "2147483647");
  }
}

TEST(IndexLimits, validate_rejects_leading_dimensions_of_2_pow_31) {
  Problem p = Problem::packed(GemmTypes{}, Op::N, Op::N, 2, 2, 2);
  p.lda = kIntMax;
  p.ldb = kIntMax;
  p.ldc = kIntMax;
  EXPECT_EQ(validate_error(p), "");
  for (int64_t Problem::*ld : {&Problem::lda, &Problem::ldb, &Problem::ldc}) {
    Problem q = p;
    q.*ld = kTooBig;
    const std::string msg = validate_error(q);
    EXPECT_HAS(msg, "= 2147483648");
    EXPECT_HAS(msg, "2147483647");
  }
}

// A shape file with one line of text, in a fresh folder.
std::string shape_file_error(const std::string& shape) {
  const fs::path dir =
      fs::temp_directory_path() / ("tgemm_index_limits_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "shapes.yaml").string();
  std::ofstream(path) << "shapes:\n  - " << shape << "\n";
  std::string msg;
  try {
    load_problem_set(path);
  } catch (const Error& e) {
    msg = e.what();
  }
  fs::remove_all(dir);
  return msg;
}

TEST(IndexLimits, shape_file_accepts_2_pow_31_minus_1) {
  EXPECT_EQ(shape_file_error("[2147483647, 1, 1]"), "");
  EXPECT_EQ(shape_file_error("{m: 1, n: 1, k: 2147483647}"), "");
}

TEST(IndexLimits, shape_file_rejects_2_pow_31_naming_line_and_limit) {
  for (const char* shape :
       {"[2147483648, 1, 1]", "[1, 2147483648, 1]", "{m: 1, n: 1, k: 2147483648}"}) {
    const std::string msg = shape_file_error(shape);
    EXPECT_HAS(msg, "shapes.yaml:2:");
    EXPECT_HAS(msg, "= 2147483648");
    EXPECT_HAS(msg, "at most 2147483647");
  }
}

TEST(IndexLimits, shape_file_names_a_dimension_beyond_64_bits_as_too_large) {
  const std::string msg = shape_file_error("[1, 99999999999999999999999, 1]");
  EXPECT_HAS(msg, "shapes.yaml:2:");
  EXPECT_HAS(msg, "n = 99999999999999999999999");
  EXPECT_HAS(msg, "at most 2147483647");
}

// The C API takes ints, so 2^31 cannot reach it; 2^31 - 1 in every size passes its checks
// (then needs a GPU: NO_DEVICE here, a selection on a GPU, never INVALID_VALUE).
TEST(IndexLimits, c_api_accepts_sizes_of_2_pow_31_minus_1) {
  tgemmHandle_t h = nullptr;
  ASSERT_EQ(tgemmCreate(&h, "/nonexistent/dir/tgemm.db"), TGEMM_STATUS_SUCCESS);
  float* fake = reinterpret_cast<float*>(uintptr_t(1) << 20);
  tgemmSelection_t selection;
  for (int which = 0; which < 4; ++which) {
    const int m = which == 0 ? INT_MAX : 1, n = which == 1 ? INT_MAX : 1;
    const int k = which == 2 ? INT_MAX : 1, lda = which == 3 ? INT_MAX : k;
    const tgemmStatus_t s = tgemmGetSelection(h, TGEMM_OP_N, TGEMM_OP_N, m, n, k, fake, lda, fake,
                                              n, fake, n, &selection);
    EXPECT_NE(s, TGEMM_STATUS_INVALID_VALUE) << which << ": " << tgemmGetLastError();
  }
  EXPECT_EQ(tgemmDestroy(h), TGEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace tgemm
