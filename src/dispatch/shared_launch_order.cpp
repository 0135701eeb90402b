#include "src/dispatch/shared_launch_order.h"

namespace tgemm {

SharedLaunchOrder::~SharedLaunchOrder() {
  if (last_) calls_.destroy(last_);
}

cudaError_t SharedLaunchOrder::run(cudaStream_t stream,
                                   const std::function<cudaError_t()>& launch) {
  std::lock_guard lock(mutex_);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = calls_.is_capturing(stream, &capture);
  if (err != cudaSuccess) return err;
  if (capture != cudaStreamCaptureStatusNone) return launch();
  if (!last_ && (err = calls_.create(&last_)) != cudaSuccess) {
    last_ = nullptr;
    return err;
  }
  if (recorded_ && (err = calls_.wait(stream, last_)) != cudaSuccess) return err;
  if ((err = launch()) != cudaSuccess) return err;
  if ((err = calls_.record(last_, stream)) != cudaSuccess) return err;
  recorded_ = true;
  return cudaSuccess;
}

}  // namespace tgemm
