// Test only: device code for sgemm_simt's host side (a space's `source:`) whose kernel writes
// to an illegal address (FAULT=1) or never finishes (FAULT=2). FAULT=0 is the shipped kernel
// itself. Pins the tuner's crash and watchdog handling without test code in shipped kernels.
#ifndef FAULT
#define FAULT 0  // 0: the shipped kernel, 1: illegal address, 2: never finishes
#endif

#if FAULT == 0
#include "sgemm_simt.cuh"
#else
#include "common/gemm_params.h"

// The shipped kernel's tunables, so a space for it names only declared parameters.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WARP_N
#define WARP_N 8
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef PAD_A
#define PAD_A 4
#endif
#ifndef PAD_B
#define PAD_B 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef SWIZZLE
#define SWIZZLE 1
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif

extern "C" __global__ void sgemm_simt(const tgemm::GemmParams p) {
#if FAULT == 1
  if (threadIdx.x == 0) *reinterpret_cast<volatile float*>(16) = p.alpha;
#else
  for (;;) asm volatile("nanosleep.u32 1000;");
#endif
}

extern "C" __global__ void sgemm_simt_prepare_c(const tgemm::GemmParams) {}
#endif
