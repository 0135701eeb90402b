// tgemm::Handle, the C++ API: a moved-from handle holds no dispatcher, and every call on it
// throws tgemm::Error saying so, as a destroyed C handle answers NOT_INITIALIZED, instead of
// calling through a null pointer.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "tests/common/temp_dir.h"
#include "tgemm/tgemm.h"

namespace tgemm {
namespace {

template <typename Call>
void expect_not_initialized(Call&& call) {
  try {
    call();
    ADD_FAILURE() << "no Error from a moved-from handle";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("moved from"), std::string::npos) << e.what();
  }
}

TEST(CppHandle, moved_from_handle_throws_on_every_call) {
  testing::TempDir dir("cpp_handle");
  Handle from(dir.file("missing.db"));
  Handle to(std::move(from));
  float a = 1, b = 1, c = 0;
  __half h = __float2half(1.0f);
  __nv_bfloat16 bf = __float2bfloat16(1.0f);
  expect_not_initialized([&] { from.set_math(Handle::Math::f32_via_3xtf32); });
  expect_not_initialized([&] { from.set_cublas_fallback(false); });
  expect_not_initialized([&] { from.sgemm('N', 'N', 1, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1); });
  expect_not_initialized([&] { from.gemm('N', 'N', 1, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1); });
  expect_not_initialized([&] { from.gemm('N', 'N', 1, 1, 1, 1, &h, 1, &h, 1, 0, &h, 1); });
  expect_not_initialized([&] { from.gemm('N', 'N', 1, 1, 1, 1, &bf, 1, &bf, 1, 0, &bf, 1); });
  expect_not_initialized([&] { from.gemm('N', 'N', 1, 1, 1, 1, &h, 1, &h, 1, 0, &c, 1); });
  expect_not_initialized([&] { from.gemm('N', 'N', 1, 1, 1, 1, &bf, 1, &bf, 1, 0, &c, 1); });
  expect_not_initialized([&] { from.selection('N', 'N', 1, 1, 1, &a, 1, &b, 1, &c, 1); });
  expect_not_initialized([&] { from.prepare("f32", 'N', 'N', 1, 1, 1, 1, 1, 1); });
  expect_not_initialized([&] { from.set_workspace(nullptr, 0); });
  expect_not_initialized([&] { from.workspace_size(); });
  // Assigned a live handle again, it works.
  from = std::move(to);
  EXPECT_NO_THROW(from.set_cublas_fallback(true));
}

}  // namespace
}  // namespace tgemm
