// cuBLAS's and cuBLASLt's handles as owners: created on the current device (an Error when they
// cannot be), destroyed with the object. For the tools; the dispatcher keeps its own per device.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>

#include "src/core/error.h"

namespace tgemm {

// The workspace a tool lets a cuBLASLt algorithm use: cuBLAS's own default on Hopper, which the
// dispatcher's shared workspace then holds.
inline constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

class CublasHandle {
 public:
  CublasHandle() {
    const cublasStatus_t status = cublasCreate(&handle_);
    if (status != CUBLAS_STATUS_SUCCESS)
      fail("cublasCreate failed: {}", cublasGetStatusString(status));
  }
  ~CublasHandle() {
    if (handle_) cublasDestroy(handle_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

class CublasLtHandle {
 public:
  CublasLtHandle() {
    const cublasStatus_t status = cublasLtCreate(&handle_);
    if (status != CUBLAS_STATUS_SUCCESS)
      fail("cublasLtCreate failed: {}", cublasGetStatusString(status));
  }
  ~CublasLtHandle() {
    if (handle_) cublasLtDestroy(handle_);
  }
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

}  // namespace tgemm
