// The gemm_mma config the CPU tests start from (128x128 tiles of 64x64 warps, 64-byte slices,
// 3 stages, 16-byte copies, XOR layout), with the parameters a test cares about overridden.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "src/core/kernel_config.h"

namespace tgemm::testing {

inline KernelConfig mma_config(
    std::initializer_list<std::pair<const char*, int64_t>> overrides = {}) {
  KernelConfig c{"gemm_mma",
                 {{"BM", 128},
                  {"BN", 128},
                  {"BK_BYTES", 64},
                  {"WM", 64},
                  {"WN", 64},
                  {"STAGES", 3},
                  {"VEC_BYTES", 16},
                  {"SMEM_XOR", 1},
                  {"SPLIT_K", 1},
                  {"SWIZZLE", 1},
                  {"SHIFT_COPY", 0},
                  {"PACK", 0}}};
  for (const auto& [name, value] : overrides) c.set(name, value);
  return c;
}

}  // namespace tgemm::testing
