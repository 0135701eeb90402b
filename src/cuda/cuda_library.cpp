#include "src/cuda/cuda_library.h"

#include "src/cuda/cuda_check.h"

namespace tgemm {

CudaLibrary::CudaLibrary(const std::vector<char>& cubin) {
  if (cubin.empty()) fail("cannot load an empty cubin");
  TGEMM_CUDA_CHECK(
      cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

CudaLibrary::~CudaLibrary() {
  if (library_) cudaLibraryUnload(library_);
}

cudaKernel_t CudaLibrary::kernel(const std::string& name) const {
  cudaKernel_t kernel = nullptr;
  TGEMM_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library_, name.c_str()));
  return kernel;
}

}  // namespace tgemm
