// Elements of every DType on the host: rounding an f32 to a type, storing and loading one
// element of a typed buffer. 16-bit C elements that hold the poison (all bits set) load as
// the f32 poison, so the checks of gemm_evaluator.h see unwritten elements in every type (FP8
// is an input type only; its all-ones byte is a NaN, and loads as the poison too).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "src/core/dtype.h"

namespace tgemm {

inline constexpr uint32_t kPoisonBits32 = 0xFFFFFFFFu;
inline constexpr uint16_t kPoisonBits16 = 0xFFFFu;
inline constexpr uint8_t kPoisonBits8 = 0xFFu;

inline __nv_fp8_interpretation_t fp8_format(DType type) {
  return type == DType::e4m3 ? __NV_E4M3 : __NV_E5M2;
}

inline void store_element(DType type, float value, void* dst) {
  switch (type) {
    case DType::f32:
      std::memcpy(dst, &value, 4);
      return;
    case DType::f16: {
      const __half_raw raw = __half_raw(__float2half_rn(value));
      std::memcpy(dst, &raw.x, 2);
      return;
    }
    case DType::bf16: {
      const __nv_bfloat16_raw raw = __nv_bfloat16_raw(__float2bfloat16_rn(value));
      std::memcpy(dst, &raw.x, 2);
      return;
    }
    case DType::e4m3:
    case DType::e5m2: {  // round to nearest even, saturating to the largest finite value
      const __nv_fp8_storage_t bits =
          __nv_cvt_float_to_fp8(value, __NV_SATFINITE, fp8_format(type));
      std::memcpy(dst, &bits, 1);
      return;
    }
  }
}

inline float load_element(DType type, const void* src) {
  if (type == DType::f32) {
    float x;
    std::memcpy(&x, src, 4);
    return x;
  }
  float poison;
  std::memcpy(&poison, &kPoisonBits32, 4);
  if (is_fp8(type)) {
    __nv_fp8_storage_t byte;
    std::memcpy(&byte, src, 1);
    if (byte == kPoisonBits8) return poison;
    const __half_raw half = __nv_cvt_fp8_to_halfraw(byte, fp8_format(type));  // exact
    return __half2float(__half(half));
  }
  uint16_t bits;
  std::memcpy(&bits, src, 2);
  if (bits == kPoisonBits16) return poison;
  if (type == DType::f16) {
    __half_raw raw;
    raw.x = bits;
    return __half2float(__half(raw));
  }
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __bfloat162float(__nv_bfloat16(raw));
}

// f32 values as a buffer of `type` elements; the f32 poison becomes all-ones bits in every type.
inline std::vector<unsigned char> to_bytes(DType type, const std::vector<float>& values) {
  const size_t e = size_t(element_bytes(type));
  std::vector<unsigned char> bytes(values.size() * e, 0xFF);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    if (bits != kPoisonBits32) store_element(type, values[i], &bytes[i * e]);
  }
  return bytes;
}

// A buffer of `type` elements as f32 values (load_element for each).
inline std::vector<float> from_bytes(DType type, const std::vector<unsigned char>& bytes) {
  const size_t e = size_t(element_bytes(type));
  std::vector<float> values(bytes.size() / e);
  for (size_t i = 0; i < values.size(); ++i) values[i] = load_element(type, &bytes[i * e]);
  return values;
}

// `value` as the nearest element of `type` holds it.
inline float round_to(DType type, float value) {
  unsigned char bytes[4] = {};
  store_element(type, value, bytes);
  return load_element(type, bytes);
}

}  // namespace tgemm
