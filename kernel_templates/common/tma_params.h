// The parameter block of the families that read A and B with the bulk tensor copy engine
// (TMA, sm_90): the common block, then the tensor maps the host encodes for the call's
// pointers (src/cuda/tensor_map.h). One definition, included by the host and the device.
// The kernel takes it as a __grid_constant__ parameter: a copy names its map by the
// parameter's address, so the maps must stay in parameter space, unmodified.
#pragma once

// Device builds (NVRTC, nvcc) name the common headers "common/..."; the host build reaches
// them from the repository root.
#ifdef __CUDACC__
#include "common/epilogue_params.h"
#include "common/gemm_params.h"
#else
#include "kernel_templates/common/epilogue_params.h"
#include "kernel_templates/common/gemm_params.h"
#endif

namespace tgemm {

// The 128 opaque bytes of a CUtensorMap, aligned as cuda.h's CUtensorMap_st (TMA needs 64).
struct alignas(128) TensorMap {
  unsigned long long opaque[16];
};

struct TmaGemmParams {
  GemmParams gemm;
  TensorMap a;  // op(A)'s stored matrix, boxes of one shared-memory slice
  TensorMap b;
  // Appended (older kernels read a and b only): C, boxes of one staged chunk, and whether the
  // launch encoded it. Only for a plan that stores C by tensor copies and a call whose C allows
  // them: 16-byte aligned rows and pointer, and rows of whole 16 bytes (a store clipped at C's
  // last column still writes the rest of that 16-byte unit, the row's padding).
  TensorMap c;
  int c_by_copy;
  // Appended, and declared only in an epilogue's builds and FP8 ones (common/epilogue_params.h,
  // which holds FP8's scales): a plain build keeps the block it had. Here rather than as a
  // second kernel parameter so that the block's functions, which take the block, reach it.
#if !defined(__CUDACC__) || (defined(TGEMM_EPILOGUE) && TGEMM_EPILOGUE != 0) || \
    (defined(TGEMM_TYPE_A) && TGEMM_TYPE_A >= 3)
  EpilogueParams epilogue;
#endif
};

}  // namespace tgemm
