// SharedWorkspace: one device's scratch (DeviceWorkspace) as the dispatcher's calls share it.
// A launch that uses it reserves it in turn (SharedLaunchOrder: one stream at a time, each
// after the last), so calls on several streams never write it at once; the most any prepared
// or called plan needed is kept for tgemmGetWorkspaceSize.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "src/dispatch/device_workspace.h"
#include "src/dispatch/shared_launch_order.h"

namespace tgemm {

class SharedWorkspace {
 public:
  explicit SharedWorkspace(const WorkspaceAllocator& allocator)
      : workspace_(std::make_unique<DeviceWorkspace>(allocator)) {}

  // Reserves `bytes` ahead of any call (tgemmPrepare): outside a capture, so it may allocate.
  // Throws as check does, and ExecutionError when the allocation fails (`what` names the user).
  void hold(size_t bytes, const std::string& what);

  // Runs `launch(workspace pointer)` in the shared order with `bytes` reserved (growing the
  // library's own buffer unless `captured`); nothing is launched when the reservation fails.
  // The reservation and the launch's error come back.
  template <typename Launch>
  Reservation run(cudaStream_t stream, size_t bytes, bool captured, Launch&& launch,
                  cudaError_t* launch_error) {
    raise_needed(bytes);
    Reservation reserved;
    *launch_error = order_.run(stream, [&] {
      reserved = workspace_->reserve(bytes, !captured);
      return reserved.ok() ? launch(reserved.ptr) : cudaSuccess;
    });
    return reserved;
  }

  // A reservation that found the buffer too small: WorkspaceTooSmallError where the user lent
  // it, else NotPreparedError (a capture cannot allocate). Nothing otherwise.
  void check(const Reservation& reserved, size_t bytes, bool capturing,
             const std::string& what) const;

  void lend(void* ptr, size_t bytes);
  void use_allocator(const WorkspaceAllocator& allocator);
  size_t bytes() const { return workspace_->bytes(); }
  size_t needed() const { return needed_.load(); }

 private:
  void raise_needed(size_t bytes);

  std::unique_ptr<DeviceWorkspace> workspace_;
  std::atomic<size_t> needed_{0};  // the most a prepared or called plan needed
  SharedLaunchOrder order_;        // the calls that use the workspace or a module's counters
};

}  // namespace tgemm
