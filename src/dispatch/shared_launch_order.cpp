#include "src/dispatch/shared_launch_order.h"

namespace tgemm {

SharedLaunchOrder::~SharedLaunchOrder() {
  if (last_) cudaEventDestroy(last_);
}

cudaError_t SharedLaunchOrder::run(cudaStream_t stream,
                                   const std::function<cudaError_t()>& launch) {
  std::lock_guard lock(mutex_);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = cudaStreamIsCapturing(stream, &capture);
  if (err != cudaSuccess) return err;
  if (capture != cudaStreamCaptureStatusNone) return launch();
  if (!last_ && (err = cudaEventCreateWithFlags(&last_, cudaEventDisableTiming)) != cudaSuccess) {
    last_ = nullptr;
    return err;
  }
  if (recorded_ && (err = cudaStreamWaitEvent(stream, last_, 0)) != cudaSuccess) return err;
  if ((err = launch()) != cudaSuccess) return err;
  if ((err = cudaEventRecord(last_, stream)) != cudaSuccess) return err;
  recorded_ = true;
  return cudaSuccess;
}

}  // namespace tgemm
