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
    case DType::e4m3:
      return "e4m3";
    case DType::e5m2:
      return "e5m2";
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
  if (text == "e4m3") return DType::e4m3;
  if (text == "e5m2") return DType::e5m2;
  fail("unknown element type '{}' (expected one of f32, f16, bf16, e4m3, e5m2)", text);
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

int element_bytes(DType dtype) {
  if (dtype == DType::f32) return 4;
  return is_fp8(dtype) ? 1 : 2;
}

bool is_fp8(DType dtype) { return dtype == DType::e4m3 || dtype == DType::e5m2; }

std::string GemmTypes::name() const {
  if (fp8()) {
    const std::string inputs = a == b ? to_string(a) : to_string(a) + "_" + to_string(b);
    return inputs + "_out_" + to_string(c);
  }
  std::string base = a == DType::f32 ? to_string(compute) : to_string(a);
  if (c != a) base += "_out_" + to_string(c);
  return base;
}

std::string GemmTypes::invalid_reason() const {
  if (is_fp8(a) != is_fp8(b))
    return "A and B must both be FP8 (e4m3 or e5m2) or share one element type";
  if (fp8()) {
    if (compute != ComputeType::f32)
      return "FP8 inputs accumulate in f32 (compute type f32), not " + to_string(compute);
    if (is_fp8(c)) return "C of an FP8 GEMM is bf16, f16 or f32 (FP8 outputs are not computed)";
    return "";
  }
  if (a != b) return "A and B must have the same element type";
  if (a == DType::f32 && c != DType::f32) return "f32 inputs need an f32 C";
  if (a != DType::f32 && compute != ComputeType::f32)
    return to_string(a) + " inputs accumulate in f32 (compute type f32), not " + to_string(compute);
  if (a != DType::f32 && c != a && c != DType::f32)
    return "C of a " + to_string(a) + " GEMM must be " + to_string(a) + " or f32";
  return "";
}

namespace {

// `dtype` of FP8 inputs: one format for both, or A's and B's joined by '_'; C bf16 unless
// `out` says otherwise.
GemmTypes fp8_types(std::string_view dtype, std::string_view out) {
  GemmTypes t;
  const size_t join = dtype.find('_');
  t.a = parse_dtype(dtype.substr(0, join));
  t.b = join == std::string_view::npos ? t.a : parse_dtype(dtype.substr(join + 1));
  if (!is_fp8(t.a) || !is_fp8(t.b))
    fail("unknown dtype '{}' (FP8 inputs are e4m3 or e5m2, e.g. e4m3 or e4m3_e5m2)", dtype);
  t.c = DType::bf16;
  if (!out.empty()) {
    if (out != "bf16" && out != "f16" && out != "f32")
      fail("unknown out '{}' for dtype {} (expected bf16, f16 or f32)", out, dtype);
    t.c = parse_dtype(out);
  }
  return t;
}

}  // namespace

GemmTypes gemm_types(std::string_view dtype, std::string_view out) {
  if (dtype.starts_with("e4m3") || dtype.starts_with("e5m2")) return fp8_types(dtype, out);
  GemmTypes t;
  if (dtype == "f32" || dtype == "tf32" || dtype == "f32x3") {
    t.compute = parse_compute_type(dtype);
  } else if (dtype == "f16" || dtype == "bf16") {
    t.a = t.b = t.c = parse_dtype(dtype);
  } else {
    fail("unknown dtype '{}' (expected one of f32, tf32, f32x3, f16, bf16, e4m3, e5m2, "
         "e4m3_e5m2, e5m2_e4m3)",
         dtype);
  }
  if (!out.empty()) {
    if (out != "f32" && out != to_string(t.a))
      fail("unknown out '{}' for dtype {} (expected f32 or {})", out, dtype, to_string(t.a));
    t.c = parse_dtype(out);
  }
  return t;
}

std::vector<GemmTypes> every_gemm_types() {
  std::vector<GemmTypes> out;
  for (const char* name : {"f32", "tf32", "f32x3", "f16", "bf16", "f16_out_f32", "bf16_out_f32"})
    out.push_back(parse_gemm_types(name));
  for (DType a : {DType::e4m3, DType::e5m2})
    for (DType b : {DType::e4m3, DType::e5m2})
      for (DType c : {DType::bf16, DType::f16, DType::f32}) out.push_back({a, b, c});
  return out;
}

GemmTypes parse_gemm_types(std::string_view name) {
  const size_t at = name.find("_out_");
  if (at == std::string_view::npos) return gemm_types(name);
  return gemm_types(name.substr(0, at), name.substr(at + 5));
}

}  // namespace tgemm
