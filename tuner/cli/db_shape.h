// The one GEMM shape that tgemm-db's best, show, explain and profile ask about: the options as
// given, and the shape they name once checked.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "src/core/problem.h"

namespace tgemm::cli::db_tool {

// The shape options as given on the command line.
struct ShapeArgs {
  std::string m, n, k;  // as given: a number past int64's range must not be clamped into it
  std::string dtype = "f32";
  std::string out;
  std::string layout = "NN";
  std::string device;
};

struct Shape {
  GemmTypes types;
  Op op_a, op_b;
  int64_t m, n, k;

  bool matches(const Problem& p) const {
    return p.types == types && p.op_a == op_a && p.op_b == op_b && p.m == m && p.n == n && p.k == k;
  }
  std::string describe() const {
    return fmt::format("{} {}{} m={} n={} k={}", types.name(), to_string(op_a), to_string(op_b), m,
                       n, k);
  }
};

// The shape `args` names; a size, type or layout that is not allowed fails with its option named.
Shape parse_shape(const ShapeArgs& args);

}  // namespace tgemm::cli::db_tool
