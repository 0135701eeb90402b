// One small, legal config of each family that serves any alignment (or, wgmma, 16-byte aligned
// operands), and the dispatcher that forces one, for the GPU tests of the families.
#pragma once

#include <memory>
#include <vector>

#include "src/core/kernel_config.h"
#include "src/dispatch/dispatcher.h"

namespace tgemm::testing {

inline KernelConfig simt_gpu_config() {
  return KernelConfig::from_params_text(
      "sgemm_simt",
      "BM=64,BN=64,BK=16,TM=4,TN=4,WARP_N=8,VEC=1,PAD_A=4,PAD_B=4,STAGES=2,SPLIT_K=1,"
      "SPLIT_MODE=0,SWIZZLE=1,MIN_BLOCKS=1");
}
inline KernelConfig warp_gpu_config() {
  return KernelConfig::from_params_text(
      "sgemm_warp",
      "BM=64,BN=128,BK=16,WM=64,WN=32,TM=16,TN=4,STAGES=4,VEC=1,SPLIT_K=1,TAIL_SPLIT=1,"
      "SWIZZLE=8,MIN_BLOCKS=1,PACK_B=0");
}
inline KernelConfig mma_gpu_config() {
  return KernelConfig::from_params_text(
      "gemm_mma",
      "BM=128,BN=128,BK_BYTES=64,WM=64,WN=64,STAGES=2,VEC_BYTES=16,SMEM_XOR=1,SPLIT_K=1,"
      "SWIZZLE=1,SHIFT_COPY=1,PACK=0");
}
inline KernelConfig wgmma_gpu_config() {
  return KernelConfig::from_params_text("gemm_wgmma",
                                        "BM=128,BN=128,WGS=2,STAGES=5,SWIZZLE=8,PACK=0,SPLIT_K=1");
}
inline KernelConfig naive_gpu_config() {
  return KernelConfig::from_params_text("gemm_naive", "BLOCK_X=32,BLOCK_Y=8");
}

// A dispatcher whose only kernel is `config` for `types`, with no cuBLAS to fall back to.
inline std::unique_ptr<Dispatcher> forced_dispatcher(const char* types,
                                                     const KernelConfig& config) {
  return std::make_unique<Dispatcher>(
      DispatcherOptions{"/nonexistent/tgemm.db",
                        std::vector<DefaultKernel>{{"*", parse_gemm_types(types), config}}, false});
}

}  // namespace tgemm::testing
