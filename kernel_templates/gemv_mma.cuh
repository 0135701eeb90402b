// gemv_mma: GEMM with one side of C at most 16 (GEMV-like shapes) on tensor cores, f32 in and
// out, computed as tf32 (one pass) or f32x3 (3xTF32, FP32-accurate), row-major.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C,  M <= 16 (SIDE=0) or
//   N <= 16 (SIDE=1).
// Seen from the small side, C is S x L with S <= 16: the large operand X (K x L: op(B) for
// SIDE=0, op(A)^T for SIDE=1) streams once from memory straight into mma.m16n8k8 B fragments,
// and the small one W (S x K) is the mma's A, its 16 rows staged once per block as fragments
// already split into tf32 big (and small) parts. Why: on the H200 the FFMA GEMV held the 16-row
// shapes to 52-65 % of the copy bandwidth (sessions 19-23), its 64 sums per lane leaving ~4
// warps per scheduler where a plain read streams at ~14; here a lane holds 4 sums per n tile of
// 8 (about 60 registers at LW=1 along L: up to 8 warps per scheduler) and one mma takes 64
// elements of X for all 16 rows, so 3xTF32 also issues fewer instructions than 16 FFMAs each.
//
// Fragments (PTX m16n8k8 .tf32; lane = 4g + t), two loops by how X is stored:
// - X contiguous along L: a k8-step loads, per group of 32 L values, two float4: rows k0 + t and
//   k0 + t + 4, L values base + 4g .. 4g + 3 (four whole 128-byte rows per load instruction).
//   Component q is the B fragment (b0, b1) of n tile q, whose logical column c is L value
//   base + 4c + q; so (c0, c1) of the four n tiles are S row g, L values base + 8t .. 8t + 7,
//   and (c2, c3) row g + 8.
// - X contiguous along K: a 32-deep K chunk loads, per n tile of 8 L values, two float4 of row
//   base + g: K values k0 + 4t .. 4t + 3 and k0 + 16 + 4t ... (each row 128 bytes over the
//   two). The K order inside a k8-step is free as long as W's fragments follow it: k8-step
//   2h + p takes components 2p and 2p + 1 of float4 h as b0 and b1, so its logical k = t is
//   K value k0 + 16h + 4t + 2p and k = t + 4 the next. (c0, c1) are S row g, L values
//   base + 2t, 2t + 1; (c2, c3) row g + 8.
// A block's warps sit side by side along L, each LW groups of 32 (along L) or n tiles of 8
// (along K), over one K slice of KB; slices add into C through f32 atomics after
// gemv_mma_prepare_c scaled C by beta. Every tunable is a macro with a default;
// configs/spaces/gemv_mma.yaml repeats each static_assert with a readable reason.

#include "common/elements.cuh"
#include "common/gemm_params.h"
#include "common/gemv_view.cuh"

// ---- Tunables ---------------------------------------------------------------------
#ifndef SIDE
#define SIDE 0  // the small side: 0 M (rows of C), 1 N (columns of C)
#endif
#ifndef WARPS
#define WARPS 4  // warps per block, side by side along L
#endif
#ifndef LW
#define LW 1  // per warp: groups of 32 L values (X along L) or n tiles of 8 (X along K)
#endif
#ifndef KB
#define KB 256  // K values per block: one K slice
#endif

// ---- Derived constants --------------------------------------------------------------
#define THREADS (32 * WARPS)
#if SIDE == 0
#define X_K_CONTIG TGEMM_OP_B   // B^T is stored N x K: X rows along K
#define W_K_CONTIG !TGEMM_OP_A  // A is stored M x K
#else
#define X_K_CONTIG !TGEMM_OP_A  // A is stored M x K: X^T rows along K
#define W_K_CONTIG TGEMM_OP_B   // B^T is stored N x K
#endif
#define L_PER_WARP (X_K_CONTIG ? 8 * LW : 32 * LW)
#define TILE_L (WARPS * L_PER_WARP)  // L values per block
#define STEPS (KB / 8)               // k8-steps per slice
// 3xTF32 adds W's small part times X's big one and W's big times X's small one.
#define TERMS (TGEMM_COMPUTE == 2 ? 3 : 1)

static_assert(TGEMM_TYPE_A == 0 && TGEMM_TYPE_B == 0 && TGEMM_TYPE_C == 0,
              "gemv_mma computes f32 inputs and outputs");
static_assert(TGEMM_COMPUTE == 1 || TGEMM_COMPUTE == 2,
              "gemv_mma computes tf32 or f32x3 (FFMA-accurate f32 is a CUDA-core family's)");
static_assert(SIDE == 0 || SIDE == 1, "SIDE must be 0 (small M) or 1 (small N)");
static_assert(WARPS >= 1 && WARPS <= 16, "WARPS must be 1..16");
static_assert(LW >= 1 && LW <= 4, "LW must be 1..4");
static_assert(KB % 32 == 0,
              "KB must be a multiple of 32 (one K chunk along K, two k8-steps along L)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
static_assert(false, "gemv_mma needs tf32 mma (sm_80+)");
#endif

namespace tgemm_gemv_mma {

using View = tgemm::GemvView;  // the problem seen from the small side (common/gemv_view.cuh)

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

// d += w * x on one n tile: one pass, or f32x3's three products in a fresh accumulator added in
// (the tensor cores' truncated sums would bias a long K, as the tiled tensor-core family found).
__device__ __forceinline__ void mma_step(float (&d)[4], const uint4& w_big, const uint4& w_small,
                                         float x0, float x1) {
  const unsigned b0 = to_tf32(x0), b1 = to_tf32(x1);
  if (TERMS == 1) {
    mma_tf32(d, w_big, b0, b1);
    return;
  }
  float part[4] = {0.f, 0.f, 0.f, 0.f};
  mma_tf32(part, w_small, b0, b1);
  mma_tf32(part, w_big, to_tf32(x0 - __uint_as_float(b0)), to_tf32(x1 - __uint_as_float(b1)));
  mma_tf32(part, w_big, b0, b1);
#pragma unroll
  for (int e = 0; e < 4; ++e) d[e] += part[e];
}

__device__ __forceinline__ float component(const float4& v, int q) {
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}

// Steps 0 .. n - 1, each on values loaded one step ahead into registers: two buffers, the
// loop unrolled by two so that each buffer stays in registers.
template <typename Buffer, typename Load, typename Step>
__device__ __forceinline__ void two_buffer_loop(int n, const Load& load, const Step& step) {
  Buffer b0, b1;
  load(0, b0);
#pragma unroll 1
  for (int i = 0; i < n; i += 2) {
    if (i + 1 < n) load(i + 1, b1);
    step(i, b0);
    if (i + 2 < n) load(i + 2, b0);
    if (i + 1 < n) step(i + 1, b1);
  }
}

// W(s, k), zero past S and the slice's end.
__device__ __forceinline__ float w_at(const View& v, int s, int k, int k_end) {
  if (s >= v.s || k >= k_end) return 0.0f;
  return W_K_CONTIG ? v.w[(long long)s * v.ldw + k] : v.w[(long long)k * v.ldw + s];
}

// The K value of k8-step `step`'s logical k = t (k = t + 4 is K_STEP_OF_T4 further).
__device__ __forceinline__ int k_of(int k_begin, int step, int t) {
  return X_K_CONTIG ? k_begin + 32 * (step >> 2) + 16 * ((step >> 1) & 1) + 4 * t + 2 * (step & 1)
                    : k_begin + 8 * step + t;
}
#define K_STEP_OF_T4 (X_K_CONTIG ? 1 : 4)

// W's slice as mma A fragments, [STEPS][32] big parts then [STEPS][32] small parts (f32x3).
__device__ __forceinline__ void stage_w(const View& v, int k_begin, int k_end, uint4* frag) {
  for (int idx = threadIdx.x; idx < STEPS * 32; idx += THREADS) {
    const int g = (idx & 31) >> 2, k = k_of(k_begin, idx >> 5, idx & 3), k4 = k + K_STEP_OF_T4;
    const float w[4] = {w_at(v, g, k, k_end), w_at(v, g + 8, k, k_end), w_at(v, g, k4, k_end),
                        w_at(v, g + 8, k4, k_end)};
    unsigned big[4], small[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      big[e] = to_tf32(w[e]);
      small[e] = to_tf32(w[e] - __uint_as_float(big[e]));
    }
    frag[idx] = make_uint4(big[0], big[1], big[2], big[3]);
    if (TERMS == 3) frag[STEPS * 32 + idx] = make_uint4(small[0], small[1], small[2], small[3]);
  }
}

// Four consecutive values of X from (k, l) along its stored direction, zero past K and L
// (element by element at an edge).
__device__ __forceinline__ float4 x_quad(const View& v, int k, int l, int k_end) {
  const int along = X_K_CONTIG ? k : l, end = X_K_CONTIG ? k_end : v.l;
  if (k >= k_end || l >= v.l) return make_float4(0.f, 0.f, 0.f, 0.f);
  const float* at = X_K_CONTIG ? v.x + (long long)l * v.ldx + k : v.x + (long long)k * v.ldx + l;
  if (along + 3 < end) return __ldg(reinterpret_cast<const float4*>(at));
  float e[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) e[q] = along + q < end ? __ldg(at + q) : 0.0f;
  return make_float4(e[0], e[1], e[2], e[3]);
}

// One result for C(s, l) of the small-side view: stored (one slice) or added (K slices, C
// scaled by beta already).
__device__ __forceinline__ void emit(const tgemm::GemmParams& p, const View& v, int s, int l,
                                     float value) {
  if (s >= v.s || l >= v.l) return;
  float* const c =
      static_cast<float*>(p.c) + (SIDE == 0 ? (long long)s * p.ldc + l : (long long)l * p.ldc + s);
  if (gridDim.y == 1)
    *c = p.alpha * value + (p.beta != 0.0f ? p.beta * *c : 0.0f);
  else
    atomicAdd(c, p.alpha * value);
}

// Four results for C(s, l .. l + 3): with SIDE=0 one 16-byte store or atomic where C allows.
__device__ __forceinline__ void emit4(const tgemm::GemmParams& p, const View& v, int s, int l,
                                      const float (&value)[4]) {
#if SIDE == 0
  if (s < v.s && l + 3 < v.l && p.c_aligned16) {
    float* const c = static_cast<float*>(p.c) + (long long)s * p.ldc + l;
    float4 out =
        make_float4(p.alpha * value[0], p.alpha * value[1], p.alpha * value[2], p.alpha * value[3]);
    if (gridDim.y == 1) {
      if (p.beta != 0.0f) {
        const float4 old = *reinterpret_cast<const float4*>(c);
        out.x += p.beta * old.x, out.y += p.beta * old.y;
        out.z += p.beta * old.z, out.w += p.beta * old.w;
      }
      *reinterpret_cast<float4*>(c) = out;
      return;
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float4*>(c), out);
    return;
#endif
  }
#endif
#pragma unroll
  for (int q = 0; q < 4; ++q) emit(p, v, s, l + q, value[q]);
}

// X contiguous along L: a k8-step is two rows of four L values per group of 32 (one step
// ahead in registers).
__device__ __forceinline__ void strip_along_l(const tgemm::GemmParams& p, const View& v,
                                              const uint4* frag, int k_begin, int k_end,
                                              int l_warp) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int steps = min(STEPS, (k_end - k_begin + 7) / 8);
  const auto load = [&](int s, float4(&x)[LW][2]) {
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        x[j][h] = x_quad(v, k_begin + 8 * s + t + 4 * h, l_warp + 32 * j + 4 * g, k_end);
  };
  float acc[LW][4][4] = {};
  const auto step = [&](int s, const float4(&x)[LW][2]) {
    const uint4 w_big = frag[s * 32 + lane];
    const uint4 w_small = TERMS == 3 ? frag[STEPS * 32 + s * 32 + lane] : w_big;
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        mma_step(acc[j][q], w_big, w_small, component(x[j][0], q), component(x[j][1], q));
  };
  two_buffer_loop<float4[LW][2]>(steps, load, step);
  // (c0, c1) of n tiles 0..3: row g, L values base + 8t .. 8t + 7; (c2, c3): row g + 8.
#pragma unroll
  for (int j = 0; j < LW; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float value[4] = {acc[j][0][e], acc[j][1][e], acc[j][2][e], acc[j][3][e]};
      emit4(p, v, g + 8 * (e >> 1), l_warp + 32 * j + 8 * t + 4 * (e & 1), value);
    }
}

// X contiguous along K: a 32-deep chunk is two float4 of one row per n tile of 8 L values (one
// chunk ahead in registers), four k8-steps.
__device__ __forceinline__ void strip_along_k(const tgemm::GemmParams& p, const View& v,
                                              const uint4* frag, int k_begin, int k_end,
                                              int l_warp) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int chunks = min(KB / 32, (k_end - k_begin + 31) / 32);
  const auto load = [&](int c, float4(&x)[LW][2]) {
#pragma unroll
    for (int j = 0; j < LW; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        x[j][h] = x_quad(v, k_begin + 32 * c + 16 * h + 4 * t, l_warp + 8 * j + g, k_end);
  };
  float acc[LW][4] = {};
  const auto chunk = [&](int c, const float4(&x)[LW][2]) {
#pragma unroll
    for (int sub = 0; sub < 4; ++sub) {  // k8-step 4c + sub: float4 sub / 2, components 2p, 2p + 1
      const int s = 4 * c + sub, h = sub >> 1, p2 = 2 * (sub & 1);
      const uint4 w_big = frag[s * 32 + lane];
      const uint4 w_small = TERMS == 3 ? frag[STEPS * 32 + s * 32 + lane] : w_big;
#pragma unroll
      for (int j = 0; j < LW; ++j)
        mma_step(acc[j], w_big, w_small, component(x[j][h], p2), component(x[j][h], p2 + 1));
    }
  };
  two_buffer_loop<float4[LW][2]>(chunks, load, chunk);
  // (c0, c1): row g, L values base + 2t, 2t + 1; (c2, c3): row g + 8.
#pragma unroll
  for (int j = 0; j < LW; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      emit(p, v, g + 8 * (e >> 1), l_warp + 8 * j + 2 * t + (e & 1), acc[j][e]);
}

}  // namespace tgemm_gemv_mma

// C = beta * C before the K slices add into it.
extern "C" __global__ void gemv_mma_prepare_c(const tgemm::GemmParams p) {
  tgemm::scale_c_by_beta<tgemm::ElementC>(p);
}

extern "C" __global__ void __launch_bounds__(THREADS) gemv_mma(const tgemm::GemmParams p) {
  using namespace tgemm_gemv_mma;
  extern __shared__ uint4 w_frag[];
  const View v = tgemm::make_gemv_view<SIDE>(p);
  const int k_begin = blockIdx.y * KB, k_end = min(v.k, k_begin + KB);
  stage_w(v, k_begin, k_end, w_frag);
  __syncthreads();
  const int l_warp = blockIdx.x * TILE_L + (threadIdx.x >> 5) * L_PER_WARP;
#if X_K_CONTIG
  strip_along_k(p, v, w_frag, k_begin, k_end, l_warp);
#else
  strip_along_l(p, v, w_frag, k_begin, k_end, l_warp);
#endif
}
