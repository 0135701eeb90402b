// SharedLaunchOrder: puts the launches that share per-device state in one order across
// streams. A workspace, and the arrival counters some kernels keep in their loaded module,
// belong to the dispatcher's device, not to a call: two such calls running at once on two
// streams would overwrite each other's partial sums or counts (and a counter left half-counted
// can hang a later call). cuBLAS asks its callers to serialise a handle; tgemm does it for them.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <mutex>

namespace tgemm {

// The CUDA runtime calls the order makes (tests inject fakes, as for WorkspaceAllocator).
struct StreamEventCalls {
  std::function<cudaError_t(cudaStream_t, cudaStreamCaptureStatus*)> is_capturing =
      [](cudaStream_t s, cudaStreamCaptureStatus* status) {
        return cudaStreamIsCapturing(s, status);
      };
  std::function<cudaError_t(cudaEvent_t*)> create = [](cudaEvent_t* e) {
    return cudaEventCreateWithFlags(e, cudaEventDisableTiming);
  };
  std::function<cudaError_t(cudaStream_t, cudaEvent_t)> wait = [](cudaStream_t s, cudaEvent_t e) {
    return cudaStreamWaitEvent(s, e, 0);
  };
  std::function<cudaError_t(cudaEvent_t, cudaStream_t)> record = [](cudaEvent_t e, cudaStream_t s) {
    return cudaEventRecord(e, s);
  };
  std::function<void(cudaEvent_t)> destroy = [](cudaEvent_t e) { cudaEventDestroy(e); };
};

class SharedLaunchOrder {
 public:
  explicit SharedLaunchOrder(StreamEventCalls calls = {}) : calls_(std::move(calls)) {}
  ~SharedLaunchOrder();
  SharedLaunchOrder(const SharedLaunchOrder&) = delete;
  SharedLaunchOrder& operator=(const SharedLaunchOrder&) = delete;

  // Runs `launch` (which enqueues work on `stream`) after everything earlier calls enqueued
  // through this order, whatever their stream: under a lock, `stream` first waits on the event
  // recorded after the last of them, and an event is recorded after `launch`. (Waiting on the
  // same stream costs one call, and stays right where a destroyed stream's handle is reused.)
  // A stream being captured into a graph is not ordered (a capture cannot wait on work
  // outside it); its graph's launches are the caller's to order. Returns the first CUDA error
  // of the ordering, or launch's own (then nothing is recorded).
  // A template, so that the dispatcher's call builds no std::function (no allocation per call).
  template <typename Launch>
  cudaError_t run(cudaStream_t stream, Launch&& launch) {
    std::lock_guard lock(mutex_);
    bool ordered = false;
    if (const cudaError_t err = wait_for_last(stream, &ordered); err != cudaSuccess) return err;
    const cudaError_t err = launch();
    return err != cudaSuccess || !ordered ? err : record_after(stream);
  }

  // Runs `change` while no launch is being enqueued through this order (to swap what those
  // launches use, such as the workspace).
  template <typename Change>
  void between_launches(Change&& change) {
    std::lock_guard lock(mutex_);
    change();
  }

 private:
  // Under the lock: *ordered is false for a stream being captured (nothing to wait or record);
  // else the event exists and `stream` waits on it once a launch was recorded.
  cudaError_t wait_for_last(cudaStream_t stream, bool* ordered);
  cudaError_t record_after(cudaStream_t stream);

  StreamEventCalls calls_;
  std::mutex mutex_;
  cudaEvent_t last_ = nullptr;  // recorded after the last launch; created on first use
  bool recorded_ = false;
};

}  // namespace tgemm
