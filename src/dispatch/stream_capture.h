// Whether a stream is being captured into a CUDA graph: what a call on it may not do then
// (compile, load, allocate, create a library handle) is refused with NotPreparedError.
#pragma once

#include <cuda_runtime_api.h>

namespace tgemm {

// An invalidated capture still counts; throws ExecutionError when CUDA cannot say.
bool stream_capturing(cudaStream_t stream);

}  // namespace tgemm
