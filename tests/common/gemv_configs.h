// A gemv_simt config with every parameter spelled out, for the GEMV GPU tests.
#pragma once

#include <cstdint>

#include "src/core/kernel_config.h"

namespace tgemm::testing {

inline KernelConfig gemv_config(int64_t side, int64_t rows, int64_t vec, int64_t warps, int64_t kb,
                                int64_t lw, int64_t split_mode) {
  return {"gemv_simt",
          {{"SIDE", side},
           {"ROWS", rows},
           {"VEC", vec},
           {"WARPS", warps},
           {"KB", kb},
           {"LW", lw},
           {"SPLIT_MODE", split_mode}}};
}

}  // namespace tgemm::testing
