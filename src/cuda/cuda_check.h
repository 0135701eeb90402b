// Turns CUDA runtime errors into tgemm::Error with the call that failed.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <string>

#include "src/core/error.h"

#define TGEMM_CUDA_CHECK(call)                                                   \
  do {                                                                           \
    cudaError_t tgemm_err_ = (call);                                             \
    if (tgemm_err_ != cudaSuccess)                                               \
      ::tgemm::fail("{} failed: {} ({})", #call, cudaGetErrorString(tgemm_err_), \
                    cudaGetErrorName(tgemm_err_));                               \
  } while (0)

namespace tgemm {

// "cudaErrorIllegalAddress: an illegal memory access was encountered", for messages.
inline std::string cuda_error_text(cudaError_t err) {
  return fmt::format("{}: {}", cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace tgemm
