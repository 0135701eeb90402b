// A gemm_tma_wgmma config by its parameters in the space's order, for the family's tests.
#pragma once

#include "src/core/kernel_config.h"

namespace tgemm::testing {

inline KernelConfig tma_config(int64_t bm, int64_t bn, int64_t consumers, int64_t stages,
                               int64_t swizzle = 8, int64_t split_k = 1, int64_t cluster = 1,
                               int64_t cluster_n = 1, int64_t tma_store = 0) {
  return {"gemm_tma_wgmma",
          {{"BM", bm},
           {"BN", bn},
           {"CONSUMERS", consumers},
           {"STAGES", stages},
           {"SWIZZLE", swizzle},
           {"SPLIT_K", split_k},
           {"CLUSTER", cluster},
           {"CLUSTER_N", cluster_n},
           {"TMA_STORE", tma_store}}};
}

}  // namespace tgemm::testing
