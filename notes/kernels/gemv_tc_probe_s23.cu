// Session 23 probe (notes, not product): a GEMV-like C (M x N, M <= 16) = A (M x K) * B (K x N),
// row-major (16x4096x4096 NN: B streamed along N), on tensor cores as 3xTF32, for
// gemv_probe_s21.cu (+ gemv_probe_s22.patch): the kernel is named gemv_simt, its grid is
// (N / TILE_N, K / KB), its dynamic shared memory KB * 128 bytes.
//
// Why: the FFMA loop issues 16 FFMAs per streamed element (S21-S22: 55-64 % of issue slots,
// 63-65 % of copy). Here one mma.m16n8k8 takes 64 elements of B for all 16 rows; 3xTF32 issues 3
// mma, 4 FADD and 3 ALU per element pair instead of 32 FFMA per 2 elements.
//
// Fragments, lane l = 4g + t: a k8-step loads, per 32 columns, two float4 of B: rows k0 + t and
// k0 + t + 4, columns base + 4g .. 4g + 3 (each load instruction reads four full 128-byte rows of
// 32 columns). Component q of those float4 is the B fragment (b0, b1) of n tile q, whose logical
// column c is the physical column base + 4c + q; so the C fragment (c0, c1) of the four n tiles
// is row g, columns base + 8t .. 8t + 7 (c2, c3: row g + 8): two float4 stores per row.
// A's fragments (a0..a3 = A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4)) are staged once
// per block, split into tf32 big and small parts, as one 16-byte word per lane and k8-step.
//
// Build (here):
//   nvcc -cubin -arch=sm_90 -std=c++17 -O3 -I kernel_templates -DWARPS=4 -DLW=1 -DKB=256 \
//     [-DTERMS=1] -Xptxas -v -o tc.cubin notes/kernels/gemv_tc_probe_s23.cu
//   ./probe 16 4096 4096 tc.cubin:tc_w4_lw1_kb256:128:256:32768:128 ... read:read:0:0:0:0
// (tile_l = 32 * WARPS * LW, smem = KB * 128, threads = 32 * WARPS; N a multiple of 4 with
// 16-byte aligned rows; C zeroed before the checked run, beta = 0.)
#include "common/gemm_params.h"

#ifndef WARPS
#define WARPS 4  // warps side by side along N, each 32 * LW columns
#endif
#ifndef LW
#define LW 1  // groups of 32 columns per warp
#endif
#ifndef KB
#define KB 256  // K per block (one K slice; slices meet in C through atomics)
#endif
#ifndef TERMS
#define TERMS 3  // 3: 3xTF32 (FP32-accurate); 1: one TF32 pass (the issue floor of the loop)
#endif
#define THREADS (32 * WARPS)
#define TILE_N (32 * WARPS * LW)
#define STEPS (KB / 8)
static_assert(KB % 16 == 0, "KB must be a multiple of 16 (two k8-steps per loop turn)");

namespace {

__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned t;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(x));
  return t;
}

// d += a * b on one 16x8 tile, K = 8, tf32 operands.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint4& a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float part_of(const float4& v, int q) {
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS) gemv_simt(const tgemm::GemmParams p) {
  extern __shared__ uint4 w_frag[];  // [STEPS][32] big parts, then [STEPS][32] small parts
  uint4* const w_big = w_frag;
  uint4* const w_small = w_frag + STEPS * 32;
  const float* const a = static_cast<const float*>(p.a);
  const float* const b = static_cast<const float*>(p.b);
  float* const c = static_cast<float*>(p.c);
  const int k_begin = blockIdx.y * KB, k_end = min(p.k, k_begin + KB);

  // A's slice as fragments, split once for every warp.
  for (int idx = threadIdx.x; idx < STEPS * 32; idx += THREADS) {
    const int s = idx >> 5, l = idx & 31, g = l >> 2, t = l & 3;
    const int k = k_begin + 8 * s + t;
    const auto at = [&](int row, int kk) {
      return row < p.m && kk < k_end ? a[(long long)row * p.lda + kk] : 0.0f;
    };
    const float v[4] = {at(g, k), at(g + 8, k), at(g, k + 4), at(g + 8, k + 4)};
    unsigned big[4], small[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      big[e] = to_tf32(v[e]);
      small[e] = to_tf32(v[e] - __uint_as_float(big[e]));
    }
    w_big[idx] = make_uint4(big[0], big[1], big[2], big[3]);
    w_small[idx] = make_uint4(small[0], small[1], small[2], small[3]);
  }
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int warp_n = blockIdx.x * TILE_N + warp * 32 * LW;
  const int steps = min(STEPS, (k_end - k_begin + 7) / 8);

  // B's two rows of a k8-step for each group of 32 columns, zero past K and N.
  const auto load = [&](int s, float4(&x)[LW][2]) {
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int k = k_begin + 8 * s + t + 4 * h, col = warp_n + 32 * j + 4 * g;
        x[j][h] = k < k_end && col < p.n
                      ? __ldg(reinterpret_cast<const float4*>(b + (long long)k * p.ldb + col))
                      : make_float4(0.f, 0.f, 0.f, 0.f);
      }
  };
  float acc[LW][4][4] = {};
  // One k8-step: each n tile's three products in a fresh accumulator, added in (the tensor
  // cores' truncated sums would otherwise bias a long K, as gemm_mma found).
  const auto step = [&](int s, const float4(&x)[LW][2]) {
    const uint4 ab = w_big[s * 32 + lane];
    const uint4 as = w_small[s * 32 + lane];
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float e0 = part_of(x[j][0], q), e1 = part_of(x[j][1], q);
        const unsigned b0 = to_tf32(e0), b1 = to_tf32(e1);
        float part[4] = {0.f, 0.f, 0.f, 0.f};
        if (TERMS == 3) {
          mma_tf32(part, as, b0, b1);
          mma_tf32(part, ab, to_tf32(e0 - __uint_as_float(b0)), to_tf32(e1 - __uint_as_float(b1)));
        }
        mma_tf32(part, ab, b0, b1);
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][q][e] += part[e];
      }
  };

  float4 x0[LW][2], x1[LW][2];
  load(0, x0);
#pragma unroll 1
  for (int s = 0; s < steps; s += 2) {
    if (s + 1 < steps) load(s + 1, x1);
    step(s, x0);
    if (s + 2 < steps) load(s + 2, x0);
    if (s + 1 < steps) step(s + 1, x1);
  }

  // c0, c1 of n tiles 0..3: row g, columns base + 8t .. 8t + 7; c2, c3: row g + 8.
#pragma unroll
  for (int j = 0; j < LW; ++j)
#pragma unroll
    for (int half = 0; half < 4; ++half) {  // (row g or g + 8) x (columns 8t.. or 8t + 4..)
      const int row = g + 8 * (half >> 1), col = warp_n + 32 * j + 8 * t + 4 * (half & 1);
      if (row >= p.m || col >= p.n) continue;
      const int e = half;  // c0: row g, 2t; c1: row g, 2t + 1; c2, c3: row g + 8
      const float4 v = make_float4(p.alpha * acc[j][0][e], p.alpha * acc[j][1][e],
                                   p.alpha * acc[j][2][e], p.alpha * acc[j][3][e]);
      float4* const out = reinterpret_cast<float4*>(c + (long long)row * p.ldc + col);
      if (gridDim.y == 1)
        *out = v;
      else
        atomicAdd(out, v);
    }
}
