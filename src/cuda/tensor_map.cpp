#include "src/cuda/tensor_map.h"

#include <cuda.h>  // CUtensorMap and the encoder's signature only: the runtime hands out the entry
#include <cudaTypedefs.h>

#include <cstdint>

namespace tgemm {

static_assert(sizeof(TensorMap) == sizeof(CUtensorMap) && alignof(TensorMap) == alignof(CUtensorMap),
              "TensorMap holds a CUtensorMap's bytes");

namespace {

// The driver's encoder, looked up once (null when the driver lacks it).
PFN_cuTensorMapEncodeTiled_v12000 tiled_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return PFN_cuTensorMapEncodeTiled_v12000(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

CUtensorMapDataType map_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::e4m3:  // TMA moves bytes: FP8 elements are 8-bit integers to it
    case DType::e5m2: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case DType::f32: break;
  }
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// What TMA requires of a tiled 2-D map (CUDA driver API, cuTensorMapEncodeTiled).
bool expressible(const TensorMapView& v, const void* base) {
  const int64_t element = element_bytes(v.dtype);
  return reinterpret_cast<uintptr_t>(base) % 16 == 0 && v.row_bytes % 16 == 0 && v.inner > 0 &&
         v.outer > 0 && v.inner < (int64_t(1) << 31) && v.outer < (int64_t(1) << 31) &&
         v.row_bytes < (int64_t(1) << 40) && v.box_inner > 0 && v.box_inner <= 256 &&
         v.box_outer > 0 && v.box_outer <= 256 && v.box_inner * element == 128;
}

}  // namespace

cudaError_t encode_tensor_map(const TensorMapView& view, const void* base, TensorMap* out) {
  if (!expressible(view, base)) return cudaErrorInvalidValue;
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tiled_encoder();
  if (!encode) return cudaErrorInvalidValue;
  const cuuint64_t extents[2] = {cuuint64_t(view.inner), cuuint64_t(view.outer)};
  const cuuint64_t strides[1] = {cuuint64_t(view.row_bytes)};
  const cuuint32_t box[2] = {cuuint32_t(view.box_inner), cuuint32_t(view.box_outer)};
  const cuuint32_t steps[2] = {1, 1};
  const CUresult r = encode(reinterpret_cast<CUtensorMap*>(out), map_type(view.dtype), 2,
                            const_cast<void*>(base), extents, strides, box, steps,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace tgemm
