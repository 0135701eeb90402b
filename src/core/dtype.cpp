#include "src/core/dtype.h"

#include "src/core/error.h"

namespace tgemm {

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::tf32:
      return "tf32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

std::string to_string(Op op) { return op == Op::N ? "N" : "T"; }

DType parse_dtype(std::string_view text) {
  if (text == "f32") return DType::f32;
  if (text == "tf32") return DType::tf32;
  if (text == "f16") return DType::f16;
  if (text == "bf16") return DType::bf16;
  fail("unknown dtype '{}' (expected one of f32, tf32, f16, bf16)", text);
}

Op parse_op(std::string_view text) {
  if (text == "N") return Op::N;
  if (text == "T") return Op::T;
  fail("unknown op '{}' (expected N or T)", text);
}

void parse_layout(std::string_view text, Op* op_a, Op* op_b) {
  if (text.size() != 2 || (text[0] != 'N' && text[0] != 'T') || (text[1] != 'N' && text[1] != 'T'))
    fail("unknown layout '{}' (expected NN, NT, TN or TT)", text);
  *op_a = parse_op(text.substr(0, 1));
  *op_b = parse_op(text.substr(1, 1));
}

}  // namespace tgemm
