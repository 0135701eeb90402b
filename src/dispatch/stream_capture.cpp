#include "src/dispatch/stream_capture.h"

#include <fmt/format.h>

#include "src/dispatch/dispatch_errors.h"

namespace tgemm {

bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(stream, &status);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw ExecutionError(
        fmt::format("cudaStreamIsCapturing on the call's stream failed: {} (the legacy default "
                    "stream cannot be used while another stream is captured)",
                    cudaGetErrorString(err)));
  }
  // An invalidated capture is still one: nothing it forbids may run until it ends.
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace tgemm
