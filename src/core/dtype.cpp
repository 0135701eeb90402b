#include "src/core/dtype.h"

#include "src/core/error.h"

namespace tgemm {

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

std::string to_string(ComputeType compute) {
  switch (compute) {
    case ComputeType::f32:
      return "f32";
    case ComputeType::tf32:
      return "tf32";
    case ComputeType::f32x3:
      return "f32x3";
  }
  return "?";
}

std::string to_string(Op op) { return op == Op::N ? "N" : "T"; }

DType parse_dtype(std::string_view text) {
  if (text == "f32") return DType::f32;
  if (text == "f16") return DType::f16;
  if (text == "bf16") return DType::bf16;
  fail("unknown element type '{}' (expected one of f32, f16, bf16)", text);
}

ComputeType parse_compute_type(std::string_view text) {
  if (text == "f32") return ComputeType::f32;
  if (text == "tf32") return ComputeType::tf32;
  if (text == "f32x3") return ComputeType::f32x3;
  fail("unknown compute type '{}' (expected one of f32, tf32, f32x3)", text);
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

int element_bytes(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

std::string GemmTypes::name() const {
  std::string base = a == DType::f32 ? to_string(compute) : to_string(a);
  if (c != a) base += "_out_" + to_string(c);
  return base;
}

std::string GemmTypes::invalid_reason() const {
  if (a != b) return "A and B must have the same element type";
  if (a == DType::f32 && c != DType::f32) return "f32 inputs need an f32 C";
  if (a != DType::f32 && compute != ComputeType::f32)
    return to_string(a) + " inputs accumulate in f32 (compute type f32), not " + to_string(compute);
  if (a != DType::f32 && c != a && c != DType::f32)
    return "C of a " + to_string(a) + " GEMM must be " + to_string(a) + " or f32";
  return "";
}

GemmTypes gemm_types(std::string_view dtype, std::string_view out) {
  GemmTypes t;
  if (dtype == "f32" || dtype == "tf32" || dtype == "f32x3") {
    t.compute = parse_compute_type(dtype);
  } else if (dtype == "f16" || dtype == "bf16") {
    t.a = t.b = t.c = parse_dtype(dtype);
  } else {
    fail("unknown dtype '{}' (expected one of f32, tf32, f32x3, f16, bf16)", dtype);
  }
  if (!out.empty()) {
    if (out != "f32" && out != to_string(t.a))
      fail("unknown out '{}' for dtype {} (expected f32 or {})", out, dtype, to_string(t.a));
    t.c = parse_dtype(out);
  }
  return t;
}

GemmTypes parse_gemm_types(std::string_view name) {
  const size_t at = name.find("_out_");
  if (at == std::string_view::npos) return gemm_types(name);
  return gemm_types(name.substr(0, at), name.substr(at + 5));
}

}  // namespace tgemm
