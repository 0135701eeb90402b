// tgemm: per-shape tuned CUDA GEMM. C++ API.
// Storage is row-major: C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C.
#pragma once

#include <stdexcept>
#include <string>

namespace tgemm {

// Every failure the library reports to C++ callers; it never calls exit().
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace tgemm
