// Test only: gemm_mma with 3xTF32 cut to its big*big pass (F32X3_TERMS=1), for gemm_mma's
// host side through a space's `source:` (tests/data/spaces/gemm_mma_one_pass_f32x3.yaml).
// Its f32x3 results are only tf32-accurate, so the evaluator's f32x3 rule must reject them.
#define F32X3_TERMS 1

// The shipped kernel's tunables, so a space for this file names only declared parameters.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK_BYTES
#define BK_BYTES 64
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef VEC_BYTES
#define VEC_BYTES 16
#endif
#ifndef SMEM_XOR
#define SMEM_XOR 1
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef SWIZZLE
#define SWIZZLE 1
#endif

#include "gemm_mma.cuh"
