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

class SharedLaunchOrder {
 public:
  SharedLaunchOrder() = default;
  ~SharedLaunchOrder();
  SharedLaunchOrder(const SharedLaunchOrder&) = delete;
  SharedLaunchOrder& operator=(const SharedLaunchOrder&) = delete;

  // Runs `launch` (which enqueues work on `stream`) after everything earlier calls enqueued
  // through this order, whatever their stream: under a lock, `stream` first waits on the event
  // recorded after the last of them, and an event is recorded after `launch`. (Waiting on the
  // same stream costs one call, and stays right where a destroyed stream's handle is reused.) A
  // stream being captured into a graph is not ordered (a capture cannot wait on work outside it);
  // its graph's launches are the caller's to order. Returns the first CUDA error of the ordering,
  // or launch's own.
  cudaError_t run(cudaStream_t stream, const std::function<cudaError_t()>& launch);

 private:
  std::mutex mutex_;
  cudaEvent_t last_ = nullptr;  // recorded after the last launch; created on first use
  bool recorded_ = false;
};

}  // namespace tgemm
