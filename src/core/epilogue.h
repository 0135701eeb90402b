// Epilogue: what a GEMM applies to its result before storing it, as cuBLASLt's matmul epilogues:
//   D = act(alpha * op(A) op(B) + beta * C + bias), aux = the values before act (optional).
// Part of a Problem's functional key, and fixed in a kernel's build (TGEMM_* defines read by
// kernel_templates/common/epilogue.cuh); the pointers are the call's (EpilogueParams).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/dtype.h"

namespace tgemm {

// The codes are common/epilogue.cuh's TGEMM_ACTIVATION and TGEMM_BIAS.
enum class Activation : uint8_t { none = 0, relu = 1, gelu = 2, gelu_erf = 3, silu = 4 };
// Which index the bias follows: one value per column of C (n, a Linear layer's bias in
// row-major C) or per row (m).
enum class BiasAlong : uint8_t { none = 0, n = 1, m = 2 };

struct Epilogue {
  Activation activation = Activation::none;  // gelu is the tanh approximation (cuBLASLt's GELU)
  BiasAlong bias = BiasAlong::none;
  bool bias_f32 = false;    // the bias is f32 while C is 16-bit (else it has C's type)
  bool aux = false;         // the pre-activation values are also written to aux (C's type)
  bool separate_d = false;  // the result goes to a D apart from C (C is only read)
  // FP8 only: A's scale is one value per row of C (m) and B's one per column (n), as cuBLASLt's
  // outer-vector scale mode (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F), not one per tensor.
  // A build of its own (TGEMM_ROWWISE_SCALES): the per-tensor builds keep their code.
  bool rowwise_scales = false;

  // What the store does beside writing alpha * acc + beta * C (cuBLASLt's EPILOGUE attribute,
  // our TGEMM_EPILOGUE builds and passes).
  bool fused() const {
    return activation != Activation::none || bias != BiasAlong::none || aux || separate_d;
  }
  // Anything a plain GEMM does not do: a problem with none is keyed and built as before.
  bool any() const { return fused() || rowwise_scales; }
  // The cuBLASLt-like kind: "bias_gelu", "relu", "bias", or "none" (D apart, nothing else).
  std::string kind() const;
  // The key's spelling: kind, then ".m" (bias along M), ".bf32" (f32 bias), ".aux", ".d" (D
  // apart), ".rowwise" (rowwise scales); "" when !any(). Round-trips through
  // parse_epilogue_name.
  std::string name() const;
  // What a kernel is built for: D is a pointer of every epilogue build (C's when none is given),
  // so separate_d counts only where it is all the epilogue does.
  Epilogue build() const;
  // The NVRTC defines of the build (TGEMM_EPILOGUE=1 and the rest where fused(), and
  // TGEMM_ROWWISE_SCALES=1); none when !any().
  std::vector<std::string> defines() const;
  // Why this epilogue does not apply to a GEMM with these types (an f32 bias asked for an f32 C
  // or without a bias, aux without an activation, rowwise scales of inputs that are not FP8), or
  // "".
  std::string invalid_reason(const GemmTypes& types) const;
  bool operator==(const Epilogue&) const = default;
};

std::string to_string(Activation activation);
// A shape file's `epilogue:` (and the C API's kinds): none, bias, relu, bias_relu, gelu,
// bias_gelu, gelu_erf, bias_gelu_erf, silu, bias_silu; a bias runs along N. Throws Error
// naming the accepted kinds.
Epilogue parse_epilogue_kind(std::string_view kind);
// Inverse of Epilogue::name() ("" is no epilogue); throws Error naming what is wrong.
Epilogue parse_epilogue_name(std::string_view name);

}  // namespace tgemm
