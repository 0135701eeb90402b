// Tensor maps for the bulk tensor copy engine (TMA), encoded on the host through the driver's
// cuTensorMapEncodeTiled, which the runtime hands out (cudaGetDriverEntryPointByVersion): nothing
// links libcuda.so, so a machine without a driver still loads the library.
#pragma once

#include <cuda_runtime_api.h>

#include "kernel_templates/common/tma_params.h"
#include "src/launch/launch_plan.h"

namespace tgemm {

// The map of `view` over the matrix at `base`: 128-byte swizzle, zeros outside the tensor.
// Returns cudaErrorInvalidValue for a view TMA cannot express (base or row stride not 16-byte
// aligned, extents past 2^31, a box over 256) or when the driver has no encoder; never throws.
cudaError_t encode_tensor_map(const TensorMapView& view, const void* base, TensorMap* out);

}  // namespace tgemm
