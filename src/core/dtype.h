// Element types, compute types and matrix operations (op(X) = X or X^T), with their text
// forms. GemmTypes names what one GEMM computes, in the spirit of cublasGemmEx's arguments.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgemm {

// How a matrix is stored in memory. e4m3 and e5m2 are the OCP FP8 formats (cuda_fp8.h's
// __nv_fp8_e4m3 and __nv_fp8_e5m2): inputs only, scaled per tensor (GemmCall::scale_a/b).
enum class DType : uint8_t { f32, f16, bf16, e4m3, e5m2 };
// How products are accumulated: f32 is FFMA-accurate, tf32 is one TF32 tensor-core pass,
// f32x3 is FP32-accurate on tensor cores (3xTF32). Every compute type accumulates in f32.
enum class ComputeType : uint8_t { f32, tf32, f32x3 };
enum class Op : uint8_t { N, T };

std::string to_string(DType dtype);
std::string to_string(ComputeType compute);
std::string to_string(Op op);
DType parse_dtype(std::string_view text);  // throws Error naming the accepted values
ComputeType parse_compute_type(std::string_view text);
Op parse_op(std::string_view text);
// "NT" -> {N, T}; throws on anything but two of N/T.
void parse_layout(std::string_view text, Op* op_a, Op* op_b);
int element_bytes(DType dtype);
bool is_fp8(DType dtype);

// The types of one GEMM: A and B share one element type, C may differ (f16 in, f32 out), except
// FP8, where A and B may be either format (as cuBLASLt's FP8 matmuls) and C is bf16, f16 or f32.
struct GemmTypes {
  DType a = DType::f32, b = DType::f32, c = DType::f32;
  ComputeType compute = ComputeType::f32;

  // The shape-file spelling: "f32", "tf32", "f32x3", "f16", "bf16", plus "_out_f32" when C
  // is f32 for 16-bit inputs ("f16_out_f32"); FP8 names both inputs where they differ and always
  // its C ("e4m3_out_bf16", "e4m3_e5m2_out_f32"). Round-trips through parse_gemm_types.
  std::string name() const;
  bool fp8() const { return is_fp8(a); }
  // Why these types are not a GEMM tgemm defines (mixed A/B types, a 16-bit input with a
  // tf32 compute type, ...), or empty when they are.
  std::string invalid_reason() const;
  bool operator==(const GemmTypes&) const = default;
};

// The shape-file form: `dtype` (f32, tf32, f32x3, f16, bf16; FP8 e4m3, e5m2, or A's and B's
// formats joined, e4m3_e5m2) and `out` (empty: C in the input type, bf16 for FP8; "f32" or the
// input type; for FP8 bf16, f16 or f32). Throws Error naming the accepted values.
GemmTypes gemm_types(std::string_view dtype, std::string_view out = "");
// Inverse of GemmTypes::name().
GemmTypes parse_gemm_types(std::string_view name);
// Every GemmTypes tgemm defines (invalid_reason() empty), the non-FP8 ones first.
std::vector<GemmTypes> every_gemm_types();

}  // namespace tgemm
