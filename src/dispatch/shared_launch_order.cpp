#include "src/dispatch/shared_launch_order.h"

namespace tgemm {

SharedLaunchOrder::~SharedLaunchOrder() {
  if (last_) calls_.destroy(last_);
}

cudaError_t SharedLaunchOrder::wait_for_last(cudaStream_t stream, bool* ordered) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = calls_.is_capturing(stream, &capture);
  if (err != cudaSuccess || capture != cudaStreamCaptureStatusNone) return err;
  if (!last_ && (err = calls_.create(&last_)) != cudaSuccess) {
    last_ = nullptr;
    return err;
  }
  if (recorded_ && (err = calls_.wait(stream, last_)) != cudaSuccess) return err;
  *ordered = true;
  return cudaSuccess;
}

cudaError_t SharedLaunchOrder::record_after(cudaStream_t stream) {
  const cudaError_t err = calls_.record(last_, stream);
  if (err == cudaSuccess) recorded_ = true;
  return err;
}

}  // namespace tgemm
