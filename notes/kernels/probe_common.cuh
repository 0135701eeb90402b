// What the probes in this folder share: a CUDA call checked, and the grid-stride read that
// cleans L2 before each timed run (and is the streaming ceiling of a run).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__global__ void read_all(const float4* __restrict__ x, size_t n4, float* out) {
  float4 s = make_float4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4;
       i += size_t(gridDim.x) * blockDim.x) {
    const float4 q = __ldg(x + i);
    s.x += q.x; s.y += q.y; s.z += q.z; s.w += q.w;
  }
  if (s.x + s.y + s.z + s.w == -777.0f) *out = s.x;
}
