// Element types and matrix operations (op(X) = X or X^T), with their text forms.
#pragma once

#include <string>
#include <string_view>

namespace tgemm {

enum class DType { f32, tf32, f16, bf16 };
enum class Op { N, T };

std::string to_string(DType dtype);
std::string to_string(Op op);
DType parse_dtype(std::string_view text);  // throws Error naming the accepted values
Op parse_op(std::string_view text);
// "NT" -> {N, T}; throws on anything but two of N/T.
void parse_layout(std::string_view text, Op* op_a, Op* op_b);

}  // namespace tgemm
