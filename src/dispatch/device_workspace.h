// DeviceWorkspace: the dispatcher's growable device scratch for plans that need one
// (LaunchPlan::workspace_bytes, e.g. deterministic split-K), as cublasSetWorkspace gives
// cuBLAS. Allocated on first need, grown (never shrunk) when a plan needs more, freed with
// its owner; a failed allocation is a status, never a crash.
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

class DeviceWorkspace {
 public:
  explicit DeviceWorkspace(WorkspaceAllocator allocator = {}) : allocator_(std::move(allocator)) {}
  ~DeviceWorkspace() {
    if (ptr_) allocator_.release(ptr_);
  }
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;

  // A buffer of at least `bytes` in *out (null for 0). Growing frees the old buffer first
  // (cudaFree waits for the kernels using it), so a failure leaves none and returns the
  // error, clearing CUDA's last error so that later calls do not see it.
  cudaError_t reserve(size_t bytes, void** out) {
    std::lock_guard lock(mutex_);
    if (bytes > bytes_) {
      if (ptr_) allocator_.release(ptr_);
      ptr_ = nullptr;
      bytes_ = 0;
      void* fresh = nullptr;
      const cudaError_t err = allocator_.allocate(&fresh, bytes);
      if (err != cudaSuccess || !fresh) {
        cudaGetLastError();
        *out = nullptr;
        return err != cudaSuccess ? err : cudaErrorMemoryAllocation;
      }
      ptr_ = fresh;
      bytes_ = bytes;
    }
    *out = bytes > 0 ? ptr_ : nullptr;
    return cudaSuccess;
  }

  size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }

 private:
  WorkspaceAllocator allocator_;
  mutable std::mutex mutex_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tgemm
