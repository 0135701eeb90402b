// gemv_simt: FP32 GEMM with one small side (GEMV-like), row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C,  M <= ROWS (SIDE=0) or
//   N <= ROWS (SIDE=1).
// Seen from the small side, C is S x L with S <= ROWS: the large operand X (K x L: op(B) for
// SIDE=0, op(A)^T for SIDE=1) is streamed once with coalesced VEC-wide loads, and the small
// one W (S x K) is staged in shared memory and broadcast. A block owns a strip of L and KB
// values of K (one K slice); its warps split the strip's K (X contiguous along L) or its rows
// (X contiguous along K), and the slices meet in C through atomics, the deterministic
// workspace reduction (common/split_k.cuh), or that reduction done by each strip's last block.
// Every tunable is a macro with a default; configs/spaces/gemv_simt.yaml repeats each
// static_assert with a readable reason.

#include "common/elements.cuh"
#include "common/gemm_params.h"
#include "common/split_k.cuh"

// ---- Tunables ---------------------------------------------------------------------
#ifndef SIDE
#define SIDE 0  // the small side: 0 M (rows of C), 1 N (columns of C)
#endif
#ifndef ROWS
#define ROWS 8  // the most rows (SIDE=0) or columns (SIDE=1) of C a config computes
#endif
#ifndef VEC
#define VEC 4  // floats per load of the large operand (1, 2, 4); needs that alignment
#endif
#ifndef WARPS
#define WARPS 8  // warps per block
#endif
#ifndef KB
#define KB 256  // K values per block: one K slice (K / KB slices meet in C)
#endif
#ifndef LW
#define LW 1  // per lane: VEC-vectors along L (X contiguous along L) or rows of L per warp
#endif
#ifndef PREFETCH
#define PREFETCH 1  // X contiguous along L: 1 loads a warp's next K group before this one's FFMAs
#endif
#ifndef SPLIT_MODE
#define SPLIT_MODE \
  1  // K slices: 0 atomics into C; 1 workspace + gemv_simt_reduce (repeatable);
     // 2 workspace, the strip's last block reduces (repeatable, one launch)
#endif

// ---- Derived constants --------------------------------------------------------------
#define THREADS (32 * WARPS)
// X (K x L) is op(B) for SIDE=0 and op(A)^T for SIDE=1; W (S x K) is op(A) or op(B)^T.
#if SIDE == 0
#define X_K_CONTIG TGEMM_OP_B   // B^T is stored N x K: X rows along K
#define W_K_CONTIG !TGEMM_OP_A  // A is stored M x K
#else
#define X_K_CONTIG !TGEMM_OP_A  // A is stored M x K: X^T rows along K
#define W_K_CONTIG TGEMM_OP_B   // B^T is stored N x K
#endif
// The strip of L one block covers.
#define TILE_L (X_K_CONTIG ? WARPS * LW : 32 * VEC * LW)

static_assert(TGEMM_TYPE_A == 0 && TGEMM_TYPE_B == 0 && TGEMM_TYPE_C == 0 && TGEMM_COMPUTE == 0,
              "gemv_simt computes f32 inputs and outputs with FFMA");
static_assert(SIDE == 0 || SIDE == 1, "SIDE must be 0 (small M) or 1 (small N)");
static_assert(ROWS >= 1 && ROWS <= 16, "ROWS must be 1..16");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(WARPS >= 1 && WARPS <= 32, "WARPS must be 1..32");
static_assert(LW >= 1 && LW <= 4, "LW must be 1..4");
static_assert(KB % (32 * VEC) == 0, "KB must be a multiple of 32*VEC (one warp-wide K step)");
static_assert(KB % (4 * WARPS) == 0, "KB must be a multiple of 4*WARPS (K groups of 4 per warp)");
static_assert(LW * ROWS * VEC <= 64, "LW*ROWS*VEC accumulators per thread must stay <= 64");
static_assert(SPLIT_MODE >= 0 && SPLIT_MODE <= 2, "SPLIT_MODE must be 0, 1 or 2");
static_assert(PREFETCH == 0 || PREFETCH == 1, "PREFETCH must be 0 or 1");

#if SPLIT_MODE == 2
// Blocks of K slices that have arrived, per strip of L. Module-scope: zero when the cubin loads
// (PTX zero-fills .global), private to this loaded config (the shared workspace holds other
// plans' data), and back to zero after every call (the last arrival wraps it).
#define GEMV_MAX_STRIPS 65536  // src/templates/gemv_simt.cpp's kMaxArrivalStrips
__device__ unsigned int gemv_simt_arrivals[GEMV_MAX_STRIPS];
#endif

namespace tgemm_gemv {

// The problem seen from the small side: C is S x L, X(k, l) and W(s, k) with their strides.
struct View {
  const float* x;
  const float* w;
  long long ldx, ldw;
  int s, l, k;
};

__device__ __forceinline__ View make_view(const tgemm::GemmParams& p) {
  View v;
  v.x = static_cast<const float*>(SIDE == 0 ? p.b : p.a);
  v.w = static_cast<const float*>(SIDE == 0 ? p.a : p.b);
  v.ldx = SIDE == 0 ? p.ldb : p.lda;
  v.ldw = SIDE == 0 ? p.lda : p.ldb;
  v.s = SIDE == 0 ? p.m : p.n;
  v.l = SIDE == 0 ? p.n : p.m;
  v.k = p.k;
  return v;
}

// The K slices of a problem: every entry (main and reduce) derives them alike from K.
__device__ __forceinline__ int slices_of(int k) { return k > KB ? (k + KB - 1) / KB : 1; }

// One result of the block's slice for C element (s, l) of the small-side view.
__device__ __forceinline__ void emit(const tgemm::GemmParams& p, int s, int l, float v) {
  const int row = SIDE == 0 ? s : l, col = SIDE == 0 ? l : s;
  float* const c = static_cast<float*>(p.c) + (long long)row * p.ldc + col;
  if (gridDim.y == 1) {
    *c = p.alpha * v + (p.beta != 0.0f ? p.beta * *c : 0.0f);
  } else if (SPLIT_MODE != 0) {
    tgemm::split_k_store_partial(p, blockIdx.y, row, col, v);
  } else {
    atomicAdd(c, p.alpha * v);  // C was scaled by beta first (gemv_simt_prepare_c)
  }
}

// Ws[s][kk] = W(s, k0 + kk) for the block's slice, zero past S and K (so they add nothing).
__device__ __forceinline__ void stage_w(const View& v, int k0, int k_end, float* ws) {
  for (int idx = threadIdx.x; idx < ROWS * KB; idx += THREADS) {
    // Consecutive threads take consecutive addresses of W as it is stored.
    const int s = W_K_CONTIG ? idx / KB : idx % ROWS;
    const int kk = W_K_CONTIG ? idx % KB : idx / ROWS;
    const int k = k0 + kk;
    float w = 0.0f;
    if (s < v.s && k < k_end) w = v.w[W_K_CONTIG ? s * v.ldw + k : (long long)k * v.ldw + s];
    ws[s * KB + kk] = w;
  }
}

// out[0..VEC) = p[0..VEC), a vector load when all of it is in range, else element-wise
// (elements at or past `count` read as zero).
__device__ __forceinline__ void load_x(const float* __restrict__ p, int count, float* out) {
  if (count >= VEC) {
    if (VEC == 4) {
      const float4 q = __ldg(reinterpret_cast<const float4*>(p));
      out[0] = q.x;
      out[VEC > 1 ? 1 : 0] = q.y;
      out[VEC > 2 ? 2 : 0] = q.z;
      out[VEC > 3 ? 3 : 0] = q.w;
    } else if (VEC == 2) {
      const float2 q = __ldg(reinterpret_cast<const float2*>(p));
      out[0] = q.x;
      out[VEC > 1 ? 1 : 0] = q.y;
    } else {
      out[0] = __ldg(p);
    }
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e) out[e] = e < count ? __ldg(p + e) : 0.0f;
  }
}

// X contiguous along L: lane owns LW vectors of the strip, warps take groups of 4 K values
// in turn, W(s, k..k+3) is one broadcast float4 from shared memory; the warps' sums meet in
// shared memory in warp order.
__device__ __forceinline__ void strip_along_l(const tgemm::GemmParams& p, const View& v, int k0,
                                              int k_end, const float* ws) {
  __shared__ float red[WARPS][TILE_L];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int l0 = blockIdx.x * TILE_L;
  float acc[LW][ROWS][VEC];
#pragma unroll
  for (int u = 0; u < LW; ++u)
#pragma unroll
    for (int s = 0; s < ROWS; ++s)
#pragma unroll
      for (int e = 0; e < VEC; ++e) acc[u][s][e] = 0.0f;

  // X of K group g: 4 rows of the lane's LW vectors (zero past K and L).
  auto load_group = [&](int g, float(&xv)[4][LW][VEC]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int k = k0 + 4 * g + j;
#pragma unroll
      for (int u = 0; u < LW; ++u) {
        const int l = l0 + (u * 32 + lane) * VEC;
        const int count = k < k_end ? v.l - l : 0;
        load_x(v.x + (long long)k * v.ldx + l, count, xv[j][u]);
      }
    }
  };
  // PREFETCH: the warp's next group is loaded before this one's FFMAs, so its loads are in
  // flight while they run (else a warp waits out the memory latency once per group).
  const int groups = (k_end - k0 + 3) / 4;  // K groups of 4 in this slice
  float next[4][LW][VEC];
  if (PREFETCH && warp < groups) load_group(warp, next);
  for (int g = warp; g < groups; g += WARPS) {
    float xv[4][LW][VEC];
    if (PREFETCH) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int u = 0; u < LW; ++u)
#pragma unroll
          for (int e = 0; e < VEC; ++e) xv[j][u][e] = next[j][u][e];
      if (g + WARPS < groups) load_group(g + WARPS, next);
    } else {
      load_group(g, xv);
    }
#pragma unroll
    for (int s = 0; s < ROWS; ++s) {
      const float4 w4 = *reinterpret_cast<const float4*>(ws + s * KB + 4 * g);
      const float w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int u = 0; u < LW; ++u)
#pragma unroll
          for (int e = 0; e < VEC; ++e) acc[u][s][e] = fmaf(w[j], xv[j][u][e], acc[u][s][e]);
    }
  }

#pragma unroll
  for (int s = 0; s < ROWS; ++s) {
    if (s >= v.s) break;  // uniform: the rows past S are zero
#pragma unroll
    for (int u = 0; u < LW; ++u)
#pragma unroll
      for (int e = 0; e < VEC; ++e) red[warp][(u * 32 + lane) * VEC + e] = acc[u][s][e];
    __syncthreads();
    for (int i = threadIdx.x; i < TILE_L; i += THREADS) {
      float sum = 0.0f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) sum += red[w][i];
      if (l0 + i < v.l) emit(p, s, l0 + i, sum);
    }
    __syncthreads();
  }
}

// X contiguous along K: warp owns LW rows of the strip, lanes step through the slice's K
// VEC values at a time (W(s, k..) read as VEC-wide words from shared memory, conflict-free),
// and each row's sums meet by a fixed butterfly of shuffles.
__device__ __forceinline__ void strip_along_k(const tgemm::GemmParams& p, const View& v, int k0,
                                              int k_end, const float* ws) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int l_first = blockIdx.x * TILE_L + warp * LW;
  float acc[LW][ROWS];
#pragma unroll
  for (int r = 0; r < LW; ++r)
#pragma unroll
    for (int s = 0; s < ROWS; ++s) acc[r][s] = 0.0f;

#pragma unroll 2
  for (int step = 0; step < KB / (32 * VEC); ++step) {
    if (k0 + step * 32 * VEC >= k_end) break;  // uniform: the slice's K is done
    const int kk = (step * 32 + lane) * VEC;
    float xv[LW][VEC];
#pragma unroll
    for (int r = 0; r < LW; ++r) {
      const int l = min(l_first + r, v.l - 1);  // rows past L repeat the last; never stored
      load_x(v.x + (long long)l * v.ldx + k0 + kk, k_end - (k0 + kk), xv[r]);
    }
#pragma unroll
    for (int s = 0; s < ROWS; ++s) {
      float w[VEC];
      if (VEC == 4) {
        const float4 q = *reinterpret_cast<const float4*>(ws + s * KB + kk);
        w[0] = q.x;
        w[VEC > 1 ? 1 : 0] = q.y;
        w[VEC > 2 ? 2 : 0] = q.z;
        w[VEC > 3 ? 3 : 0] = q.w;
      } else if (VEC == 2) {
        const float2 q = *reinterpret_cast<const float2*>(ws + s * KB + kk);
        w[0] = q.x;
        w[VEC > 1 ? 1 : 0] = q.y;
      } else {
        w[0] = ws[s * KB + kk];
      }
#pragma unroll
      for (int r = 0; r < LW; ++r)
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc[r][s] = fmaf(w[e], xv[r][e], acc[r][s]);
    }
  }

#pragma unroll
  for (int r = 0; r < LW; ++r)
#pragma unroll
    for (int s = 0; s < ROWS; ++s) {
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2)
        acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], offset);
      // Lanes take turns storing, so a warp's LW*ROWS stores spread over its lanes.
      if (lane == (r * ROWS + s) % 32 && s < v.s && l_first + r < v.l)
        emit(p, s, l_first + r, acc[r][s]);
    }
}

#if SPLIT_MODE == 2
// After every thread stored its partials: the strip's last block to arrive sums all slices in
// slice order (split_k_reduce's rounding, so SPLIT_MODE 1 and 2 agree bitwise) and writes C.
__device__ __forceinline__ void finish_strip(const tgemm::GemmParams& p, const View& v) {
  __shared__ bool last;
  __threadfence();  // this thread's partials are visible device-wide before the block arrives
  __syncthreads();
  const unsigned slices = gridDim.y;
  if (threadIdx.x == 0)  // atomicInc wraps slices-1 to 0: the last arrival resets the count
    last = atomicInc(&gemv_simt_arrivals[blockIdx.x], slices - 1) == slices - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();  // read the other blocks' partials only after seeing them all arrive
  const float* const ws = static_cast<const float*>(p.workspace);
  const long long mn = (long long)p.m * p.n;
  const int l0 = blockIdx.x * TILE_L, width = min(TILE_L, v.l - l0);
  for (int idx = threadIdx.x; idx < v.s * width; idx += THREADS) {
    // Consecutive threads on consecutive columns of C (coalesced partials and C).
    const int s = SIDE == 0 ? idx / width : idx % v.s;
    const int l = l0 + (SIDE == 0 ? idx % width : idx / v.s);
    const int row = SIDE == 0 ? s : l, col = SIDE == 0 ? l : s;
    const float* const part = ws + (long long)row * p.n + col;
    float sum = 0.0f;
    for (int z = 0; z < (int)slices; ++z) sum += __ldcg(part + z * mn);  // L2: not a stale L1
    float* const c = static_cast<float*>(p.c) + (long long)row * p.ldc + col;
    *c = p.alpha * sum + (p.beta != 0.0f ? p.beta * *c : 0.0f);
  }
}
#endif

}  // namespace tgemm_gemv

// C = beta * C (zero when beta == 0): run before atomic K slices add into C.
extern "C" __global__ void gemv_simt_prepare_c(const tgemm::GemmParams p) {
  tgemm::scale_c_by_beta<float>(p);
}

#if SPLIT_MODE == 1
// C = alpha * (the slices' partials in slice order) + beta * C, after the main launch.
extern "C" __global__ void gemv_simt_reduce(const tgemm::GemmParams p) {
  tgemm::split_k_reduce<float>(p, tgemm_gemv::slices_of(p.k));
}
#endif

// Grid: x strips of TILE_L along L, y K slices of KB (tgemm_gemv::slices_of).
extern "C" __global__ void __launch_bounds__(THREADS) gemv_simt(const tgemm::GemmParams p) {
  using namespace tgemm_gemv;
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned vector reads of W
  float* const ws = reinterpret_cast<float*>(smem_raw);  // [ROWS][KB]
  const View v = make_view(p);
  const int k0 = blockIdx.y * KB;
  const int k_end = min(v.k, k0 + KB);
  stage_w(v, k0, k_end, ws);
  __syncthreads();
#if X_K_CONTIG  // a preprocessor choice: only the chosen strip's shared memory is allocated
  strip_along_k(p, v, k0, k_end, ws);
#else
  strip_along_l(p, v, k0, k_end, ws);
#endif
#if SPLIT_MODE == 2
  if (gridDim.y > 1) finish_strip(p, v);
#endif
}
