// Reads the resource report that `-Xptxas=-v` writes into the NVRTC log.
#pragma once

#include <string>

namespace tgemm {

struct PtxasResources {
  bool found = false;  // false when the log held no "Used N registers" line
  int registers = 0;
  int smem_bytes = 0;  // static shared memory
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  // ptxas had to wait out each wgmma.mma_async (C7514/C7515 "Potential Performance Loss"):
  // registers of a wgmma in flight were touched, so the tensor-core pipeline runs one at a time.
  bool wgmma_serialized = false;
};

// Reads the report of `function` (the extern "C" kernel name); ignores other entries.
PtxasResources parse_ptxas_log(const std::string& log, const std::string& function);

}  // namespace tgemm
