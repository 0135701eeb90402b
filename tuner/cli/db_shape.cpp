#include "tuner/cli/db_shape.h"

#include <charconv>
#include <cstdint>
#include <utility>

#include "src/core/error.h"

namespace tgemm::cli::db_tool {

Shape parse_shape(const ShapeArgs& args) {
  int64_t sizes[3] = {};
  const std::pair<const char*, const std::string*> given[] = {
      {"--m", &args.m}, {"--n", &args.n}, {"--k", &args.k}};
  for (int i = 0; i < 3; ++i) {
    const std::string& text = *given[i].second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), sizes[i]);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || sizes[i] < 1 ||
        sizes[i] > INT32_MAX)
      fail("{} must be from 1 to {} (the kernels index it with a 32-bit int), got {}",
           given[i].first, INT32_MAX, text);
  }
  Shape shape{gemm_types(args.dtype, args.out), Op::N, Op::N, sizes[0], sizes[1], sizes[2]};
  parse_layout(args.layout, &shape.op_a, &shape.op_b);
  return shape;
}

}  // namespace tgemm::cli::db_tool
