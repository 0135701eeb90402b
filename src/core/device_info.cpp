#include "src/core/device_info.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "src/core/error.h"

namespace tgemm {

int cuda_device_count() {
  int count = 0;
  // Without a driver the runtime reports cudaErrorInsufficientDriver / NoDevice here.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear it; absence of a GPU is an answer, not an error
    return 0;
  }
  return count;
}

DeviceInfo query_device(int ordinal) {
  int count = cuda_device_count();
  if (count == 0) fail("no CUDA driver/device available");
  if (ordinal < 0 || ordinal >= count)
    fail("CUDA device {} does not exist ({} device(s) present)", ordinal, count);
  cudaDeviceProp prop{};
  cudaError_t err = cudaGetDeviceProperties(&prop, ordinal);
  if (err != cudaSuccess) fail("cudaGetDeviceProperties({}): {}", ordinal, cudaGetErrorString(err));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.arch = fmt::format("sm_{}{}", prop.major, prop.minor);
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, ordinal);
  cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal);
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  info.limits.arch = info.arch;
  info.limits.max_threads_per_block = prop.maxThreadsPerBlock;
  info.limits.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  info.limits.regs_per_sm = prop.regsPerMultiprocessor;
  info.limits.regs_per_block = prop.regsPerBlock;
  info.limits.smem_per_block_optin = int(prop.sharedMemPerBlockOptin);
  info.limits.smem_per_sm = int(prop.sharedMemPerMultiprocessor);
  info.limits.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  info.limits.reserved_smem_per_block = int(prop.reservedSharedMemPerBlock);
  return info;
}

}  // namespace tgemm
