// DeviceWorkspace: the dispatcher's device scratch for plans that need one
// (LaunchPlan::workspace_bytes, e.g. deterministic split-K). Either the library's own buffer,
// allocated on first need, grown (never shrunk) when a plan needs more and freed with its
// owner, or a buffer the user lends (tgemmSetWorkspace, as cublasSetWorkspace gives cuBLAS),
// which is never allocated, grown nor freed. A failed allocation is a status, never a crash.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <mutex>
#include <utility>

namespace tgemm {

// How workspace memory is obtained: cudaMalloc/cudaFree unless a test injects a fake.
struct WorkspaceAllocator {
  std::function<cudaError_t(void**, size_t)> allocate = [](void** p, size_t bytes) {
    return cudaMalloc(p, bytes);
  };
  std::function<void(void*)> release = [](void* p) { cudaFree(p); };
};

// What reserve gave: a buffer, or why none.
struct Reservation {
  void* ptr = nullptr;              // at least the bytes asked for; null for 0 bytes or a failure
  cudaError_t error = cudaSuccess;  // the failed allocation's
  // The buffer is smaller and may not grow: it is the user's, or growing was not allowed.
  bool too_small = false;
  bool ok() const { return error == cudaSuccess && !too_small; }
};

class DeviceWorkspace {
 public:
  explicit DeviceWorkspace(WorkspaceAllocator allocator = {}) : allocator_(std::move(allocator)) {}
  ~DeviceWorkspace() { drop_own(); }
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;

  // A buffer of at least `bytes`. The library's own buffer grows when `may_grow` (never
  // during a stream capture, where allocating breaks it): growing frees the old buffer first
  // (cudaFree waits for the kernels using it), so a failure leaves none and returns the
  // error, clearing CUDA's last error so that later calls do not see it.
  Reservation reserve(size_t bytes, bool may_grow = true) {
    std::lock_guard lock(mutex_);
    Reservation out;
    if (bytes > bytes_) {
      if (user_ || !may_grow) {
        out.too_small = true;
        return out;
      }
      drop_own();
      void* fresh = nullptr;
      const cudaError_t err = allocator_.allocate(&fresh, bytes);
      if (err != cudaSuccess || !fresh) {
        cudaGetLastError();
        out.error = err != cudaSuccess ? err : cudaErrorMemoryAllocation;
        return out;
      }
      ptr_ = fresh;
      bytes_ = bytes;
    }
    out.ptr = bytes > 0 ? ptr_ : nullptr;
    return out;
  }

  // From now on the user's buffer of `bytes` (the library's own is freed); a null `ptr`
  // returns to the library's own buffer, allocated on the next need.
  void lend(void* ptr, size_t bytes) {
    std::lock_guard lock(mutex_);
    drop_own();
    user_ = ptr != nullptr;
    ptr_ = ptr;
    bytes_ = user_ ? bytes : 0;
  }

  size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }
  bool lent() const {
    std::lock_guard lock(mutex_);
    return user_;
  }

 private:
  // Frees the library's own buffer (never the user's); under the lock.
  void drop_own() {
    if (ptr_ && !user_) allocator_.release(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    user_ = false;
  }

  WorkspaceAllocator allocator_;
  mutable std::mutex mutex_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  bool user_ = false;  // ptr_ is the user's (lend): never grown nor freed
};

}  // namespace tgemm
