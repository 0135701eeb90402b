// CudaLibrary: a cubin loaded through the runtime's library API (cudaLibraryLoadData),
// so nothing links libcuda.so; its kernels are context-independent and serve every device.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace tgemm {

class CudaLibrary {
 public:
  // Throws Error (with the runtime's message) when the cubin cannot be loaded.
  explicit CudaLibrary(const std::vector<char>& cubin);
  ~CudaLibrary();
  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;

  // The kernel handle, usable with cudaLaunchKernel / cudaFuncSetAttribute as a `const void*`.
  cudaKernel_t kernel(const std::string& name) const;

 private:
  cudaLibrary_t library_ = nullptr;
};

}  // namespace tgemm
