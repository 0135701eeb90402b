// gemv_mma: GEMM with at most 16 rows of C (GEMV-like shapes with a small M) on tensor cores,
// f32 in and out, computed as tf32 (one pass) or f32x3 (3xTF32, FP32-accurate), row-major.
//   C (M x N) = alpha * op(A) (M x K) * B (K x N) + beta * C,  M <= 16, B stored K x N.
// B, the large operand, streams once from memory straight into mma.m16n8k8 B fragments; A's
// 16 rows are the mma's M. Why: on the H200 the FFMA GEMV held the 16-row shapes to 63-65 % of
// the copy bandwidth (sessions 19-23), its 64 sums per lane (16 rows x 4 columns) leaving ~4
// warps per scheduler where a plain read streams at ~14; here a lane holds 16 sums per 32
// columns (about 60 registers: up to 8 warps per scheduler) and one mma takes 64 elements of B
// for all 16 rows, so 3xTF32 also issues fewer instructions than the 16 FFMAs per element.
//
// Fragments, lane l = 4g + t (PTX m16n8k8 .tf32): a k8-step loads, per group of 32 columns of
// B, two float4: rows k0 + t and k0 + t + 4, columns base + 4g .. 4g + 3 (one load instruction
// reads four whole 128-byte rows of 32 columns). Component q of the two is the B fragment
// (b0, b1) of n tile q, whose logical column c is the physical column base + 4c + q; so the C
// fragment (c0, c1) of the four n tiles is row g, columns base + 8t .. 8t + 7, and (c2, c3)
// row g + 8: two float4 per row. A's fragments (A(g, t), A(g + 8, t), A(g, t + 4),
// A(g + 8, t + 4)) are staged once per block as one 16-byte word per lane and k8-step, already
// split into tf32 big (and small) parts for every warp.
//
// A block's warps sit side by side along N, each 32 * LW columns, over one K slice of KB; the
// slices meet in C through f32 atomics after gemv_mma_prepare_c scaled C by beta.
// Every tunable is a macro with a default; configs/spaces/gemv_mma.yaml repeats each
// static_assert with a readable reason.

#include "common/elements.cuh"
#include "common/gemm_params.h"

// ---- Tunables ---------------------------------------------------------------------
#ifndef WARPS
#define WARPS 4  // warps per block, side by side along N
#endif
#ifndef LW
#define LW 1  // groups of 32 columns of C per warp
#endif
#ifndef KB
#define KB 256  // K values per block: one K slice
#endif

// ---- Derived constants --------------------------------------------------------------
#define THREADS (32 * WARPS)
#define TILE_N (32 * WARPS * LW)  // columns of C per block
#define STEPS (KB / 8)            // k8-steps per slice
// 3xTF32 adds A's small part times B's big one and A's big times B's small one.
#define TERMS (TGEMM_COMPUTE == 2 ? 3 : 1)

static_assert(TGEMM_TYPE_A == 0 && TGEMM_TYPE_B == 0 && TGEMM_TYPE_C == 0,
              "gemv_mma computes f32 inputs and outputs");
static_assert(TGEMM_COMPUTE == 1 || TGEMM_COMPUTE == 2,
              "gemv_mma computes tf32 or f32x3 (FFMA-accurate f32 is the FFMA GEMV family's)");
static_assert(TGEMM_OP_B == 0, "gemv_mma streams B stored K x N (along N)");
static_assert(WARPS >= 1 && WARPS <= 16, "WARPS must be 1..16");
static_assert(LW >= 1 && LW <= 4, "LW must be 1..4");
static_assert(KB % 16 == 0, "KB must be a multiple of 16 (two k8-steps per loop turn)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
static_assert(false, "gemv_mma needs tf32 mma (sm_80+)");
#endif

namespace tgemm_gemv_mma {

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

__device__ __forceinline__ float component(const float4& v, int q) {
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}

// op(A)(row, k), zero past M and the slice's end.
__device__ __forceinline__ float a_at(const tgemm::GemmParams& p, int row, int k, int k_end) {
  if (row >= p.m || k >= k_end) return 0.0f;
  const float* a = static_cast<const float*>(p.a);
  return TGEMM_OP_A ? a[(long long)k * p.lda + row] : a[(long long)row * p.lda + k];
}

// A's slice as mma fragments, [STEPS][32] big parts then [STEPS][32] small parts (f32x3).
__device__ __forceinline__ void stage_a(const tgemm::GemmParams& p, int k_begin, int k_end,
                                        uint4* frag) {
  for (int idx = threadIdx.x; idx < STEPS * 32; idx += THREADS) {
    const int s = idx >> 5, g = (idx & 31) >> 2, t = idx & 3;
    const int k = k_begin + 8 * s + t;
    const float v[4] = {a_at(p, g, k, k_end), a_at(p, g + 8, k, k_end), a_at(p, g, k + 4, k_end),
                        a_at(p, g + 8, k + 4, k_end)};
    unsigned big[4], small[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      big[e] = to_tf32(v[e]);
      small[e] = to_tf32(v[e] - __uint_as_float(big[e]));
    }
    frag[idx] = make_uint4(big[0], big[1], big[2], big[3]);
    if (TERMS == 3) frag[STEPS * 32 + idx] = make_uint4(small[0], small[1], small[2], small[3]);
  }
}

// Four columns of row k of B from `col`, zero past K and N (element by element at N's edge).
__device__ __forceinline__ float4 b_quad(const tgemm::GemmParams& p, int k, int k_end, int col) {
  if (k >= k_end || col >= p.n) return make_float4(0.f, 0.f, 0.f, 0.f);
  const float* row = static_cast<const float*>(p.b) + (long long)k * p.ldb;
  if (col + 3 < p.n) return __ldg(reinterpret_cast<const float4*>(row + col));
  float v[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) v[q] = col + q < p.n ? __ldg(row + col + q) : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

// Four results of C row `row` from column `col`: stored (one slice) or added (K slices, C
// scaled by beta already); 16 bytes at once where C allows and all four are in range.
__device__ __forceinline__ void emit_quad(const tgemm::GemmParams& p, int row, int col,
                                          const float (&v)[4]) {
  if (row >= p.m || col >= p.n) return;
  float* const c = static_cast<float*>(p.c) + (long long)row * p.ldc + col;
  const bool whole = col + 3 < p.n && p.c_aligned16;
  if (gridDim.y == 1) {
    float out[4];
#pragma unroll
    for (int q = 0; q < 4; ++q)
      out[q] = p.alpha * v[q] + (p.beta != 0.0f && col + q < p.n ? p.beta * c[q] : 0.0f);
    if (whole) {
      *reinterpret_cast<float4*>(c) = make_float4(out[0], out[1], out[2], out[3]);
    } else {
      for (int q = 0; q < 4 && col + q < p.n; ++q) c[q] = out[q];
    }
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (whole) {
    atomicAdd(reinterpret_cast<float4*>(c),
              make_float4(p.alpha * v[0], p.alpha * v[1], p.alpha * v[2], p.alpha * v[3]));
    return;
  }
#endif
  for (int q = 0; q < 4 && col + q < p.n; ++q) atomicAdd(c + q, p.alpha * v[q]);
}

}  // namespace tgemm_gemv_mma

// C = beta * C before the K slices add into it.
extern "C" __global__ void gemv_mma_prepare_c(const tgemm::GemmParams p) {
  tgemm::scale_c_by_beta<tgemm::ElementC>(p);
}

extern "C" __global__ void __launch_bounds__(THREADS) gemv_mma(const tgemm::GemmParams p) {
  using namespace tgemm_gemv_mma;
  extern __shared__ uint4 a_frag[];
  const int k_begin = blockIdx.y * KB, k_end = min(p.k, k_begin + KB);
  stage_a(p, k_begin, k_end, a_frag);
  __syncthreads();

  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int warp_n = blockIdx.x * TILE_N + (threadIdx.x >> 5) * 32 * LW;
  const int steps = min(STEPS, (k_end - k_begin + 7) / 8);
  const auto load = [&](int s, float4(&x)[LW][2]) {
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        x[j][h] = b_quad(p, k_begin + 8 * s + t + 4 * h, k_end, warp_n + 32 * j + 4 * g);
  };
  float acc[LW][4][4] = {};
  // One k8-step. f32x3: each n tile's three products in a fresh accumulator, added in (the
  // tensor cores' truncated sums would bias a long K, as the tiled tensor-core family found).
  const auto step = [&](int s, const float4(&x)[LW][2]) {
    const uint4 a_big = a_frag[s * 32 + lane];
    const uint4 a_small = TERMS == 3 ? a_frag[STEPS * 32 + s * 32 + lane] : a_big;
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float e0 = component(x[j][0], q), e1 = component(x[j][1], q);
        const unsigned b0 = to_tf32(e0), b1 = to_tf32(e1);
        if (TERMS == 3) {
          float part[4] = {0.f, 0.f, 0.f, 0.f};
          mma_tf32(part, a_small, b0, b1);
          mma_tf32(part, a_big, to_tf32(e0 - __uint_as_float(b0)),
                   to_tf32(e1 - __uint_as_float(b1)));
          mma_tf32(part, a_big, b0, b1);
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[j][q][e] += part[e];
        } else {
          mma_tf32(acc[j][q], a_big, b0, b1);
        }
      }
  };

  // B one k8-step ahead in registers.
  float4 x0[LW][2], x1[LW][2];
  load(0, x0);
#pragma unroll 1
  for (int s = 0; s < steps; s += 2) {
    if (s + 1 < steps) load(s + 1, x1);
    step(s, x0);
    if (s + 2 < steps) load(s + 2, x0);
    if (s + 1 < steps) step(s + 1, x1);
  }

  // (c0, c1) of n tiles 0..3: row g, columns base + 8t .. 8t + 7; (c2, c3): row g + 8.
#pragma unroll
  for (int j = 0; j < LW; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float v[4] = {acc[j][0][e], acc[j][1][e], acc[j][2][e], acc[j][3][e]};
      emit_quad(p, g + 8 * (e >> 1), warp_n + 32 * j + 8 * t + 4 * (e & 1), v);
    }
}
