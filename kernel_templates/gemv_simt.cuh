// gemv_simt: FP32 GEMM with one small side (GEMV-like), row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C,  M <= ROWS (SIDE=0) or
//   N <= ROWS (SIDE=1).
// Seen from the small side, C is S x L with S <= ROWS: the large operand X (K x L: op(B) for
// SIDE=0, op(A)^T for SIDE=1) is streamed once with coalesced VEC-wide loads, and the small
// one W (S x K) is staged in shared memory and broadcast. A block owns a strip of L and KB
// values of K (one K slice); its warps split the strip's K (X contiguous along L) or its rows
// (X contiguous along K: KLANES lanes per row), and the slices meet in C through atomics (C
// scaled by each strip's first slice in the same launch), the deterministic
// workspace reduction (common/split_k.cuh), that reduction done by each strip's last block, or
// (sm_90) the shared memory of a cluster that holds all of a strip's slices.
// Every tunable is a macro with a default; configs/spaces/gemv_simt.yaml repeats each
// static_assert with a readable reason.

#include "common/async_copy.cuh"
#include "common/cluster.cuh"
#include "common/elements.cuh"
#include "common/gemm_params.h"
#include "common/gemv_view.cuh"
#include "common/grid_dependency.cuh"
#include "common/split_k.cuh"
#include "common/tile_ready.cuh"

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
#ifndef STAGES
#define STAGES \
  0  // X contiguous along L: 0 loads into registers (PREFETCH); 2..4 a warp's K
     // groups in flight through a cp.async ring in shared memory (sm_80+)
#endif
#ifndef KLANES
#define KLANES 32  // X contiguous along K: lanes that share one row of X (4, 8, 16 or 32)
#endif
#ifndef SPLIT_MODE
#define SPLIT_MODE \
  1  // K slices: 0 atomics into C (one launch); 1 workspace + gemv_simt_reduce (repeatable);
     // 2 workspace, the strip's last block reduces (repeatable, one launch);
     // 3 a cluster of CLUSTER blocks holds the strip's slices (sm_90, repeatable, one launch)
#endif
#ifndef CLUSTER
#define CLUSTER 1  // SPLIT_MODE=3: blocks per cluster along K, the most K slices it serves
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
// The strip of L one block covers: rows of X per warp (KLANES lanes each), or vectors of a row.
#define TILE_L (X_K_CONTIG ? WARPS * LW * (32 / KLANES) : 32 * VEC * LW)
// W stored along S (row k of its storage holds W(0.., k)) for the loop along K with 13-16 rows:
// staged in its stored order, 16-byte copies where its rows are aligned (a quarter of the
// copies element by element take), Ws[kk] a row of W_SO_PITCH floats holding W(0..15, k0 + kk)
// as four 16-byte chunks, chunk c at c ^ ((kk >> 3) & 3): the 8 lanes of a lane group read 8
// different chunks (KLANES=8, VEC=4). The loop then reads W along S.
#define W_STORED_ORDER (X_K_CONTIG && !W_K_CONTIG && ROWS > 12)
#define W_SO_PITCH 20
// Floats of the staged W in dynamic shared memory: src/templates/gemv_simt.cpp's w_floats.
#define W_FLOATS (W_STORED_ORDER ? W_SO_PITCH * KB : ROWS * KB)
// W_STORED_ORDER's loop takes a few registers more than 128, which would halve the blocks of 128
// or 256 threads an SM holds: its build is held to 128. Every
// other build keeps the plain bound (a minimum of one block already lets ptxas take more).
#if W_STORED_ORDER && THREADS <= 256
#define GEMV_LAUNCH_BOUNDS __launch_bounds__(THREADS, 65536 / (THREADS * 128))
#else
#define GEMV_LAUNCH_BOUNDS __launch_bounds__(THREADS)
#endif

static_assert(TGEMM_TYPE_A == 0 && TGEMM_TYPE_B == 0 && TGEMM_TYPE_C == 0 && TGEMM_COMPUTE == 0,
              "gemv_simt computes f32 inputs and outputs with FFMA");
static_assert(SIDE == 0 || SIDE == 1, "SIDE must be 0 (small M) or 1 (small N)");
static_assert(ROWS >= 1 && ROWS <= 16, "ROWS must be 1..16");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(WARPS >= 1 && WARPS <= 32, "WARPS must be 1..32");
static_assert(LW >= 1 && LW <= 4, "LW must be 1..4");
static_assert(KB % (32 * VEC) == 0, "KB must be a multiple of 32*VEC (one warp-wide K step)");
static_assert(KB % (4 * WARPS) == 0, "KB must be a multiple of 4*WARPS (K groups of 4 per warp)");
static_assert(KLANES == 4 || KLANES == 8 || KLANES == 16 || KLANES == 32,
              "KLANES must be 4, 8, 16 or 32");
// Accumulators per thread: LW*ROWS rows along K, LW*ROWS*VEC vectors along L.
static_assert(LW * ROWS <= 64, "LW*ROWS accumulators per thread must stay <= 64");
static_assert(X_K_CONTIG || LW * ROWS * VEC <= 64,
              "LW*ROWS*VEC accumulators per thread must stay <= 64 when X is contiguous along L");
static_assert(SPLIT_MODE >= 0 && SPLIT_MODE <= 3, "SPLIT_MODE must be 0, 1, 2 or 3");
static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4 || CLUSTER == 8,
              "CLUSTER must be 1, 2, 4 or 8 (a portable cluster size)");
static_assert((SPLIT_MODE == 3) == (CLUSTER > 1), "CLUSTER > 1 exactly when SPLIT_MODE is 3");
static_assert(PREFETCH == 0 || PREFETCH == 1, "PREFETCH must be 0 or 1");
static_assert(STAGES == 0 || (STAGES >= 2 && STAGES <= 4), "STAGES must be 0 or 2..4");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
static_assert(STAGES == 0, "STAGES > 0 needs cp.async (sm_80+)");
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
static_assert(SPLIT_MODE != 3, "SPLIT_MODE=3 needs thread block clusters (sm_90+)");
#endif
// Floats of one warp's ring slot (one K group: 4 rows of the lane's LW vectors), and of the
// whole ring of the block, behind the staged W in dynamic shared memory.
#define RING_SLOT (4 * LW * 32 * VEC)
#define RING_FLOATS (STAGES * WARPS * RING_SLOT)

#if SPLIT_MODE == 0 || SPLIT_MODE == 2
// Blocks of K slices that have arrived, per strip of L. Module-scope: zero when the cubin loads
// (PTX zero-fills .global), private to this loaded config (the shared workspace holds other
// plans' data), and back to zero after every call (the last arrival wraps it).
#define GEMV_MAX_STRIPS 65536  // src/templates/gemv_simt.cpp's kMaxArrivalStrips
__device__ unsigned int gemv_simt_arrivals[GEMV_MAX_STRIPS];
#endif
#if SPLIT_MODE == 0
// Per strip: 1 once its first K slice scaled C by beta (common/tile_ready.cuh), 0 between calls.
__device__ unsigned int gemv_simt_c_ready[GEMV_MAX_STRIPS];
#endif

namespace tgemm_gemv {

using View = tgemm::GemvView;  // the problem seen from the small side (common/gemv_view.cuh)

// The K slices of a problem: every entry (main and reduce) derives them alike from K.
__device__ __forceinline__ int slices_of(int k) { return k > KB ? (k + KB - 1) / KB : 1; }

#if SPLIT_MODE == 3
// The block's sums for its strip, [s][l - strip start], read by every block of its cluster.
__shared__ float cluster_part[ROWS * TILE_L];
#endif

// C element (s, l) of the small-side view.
__device__ __forceinline__ float* c_at(const tgemm::GemmParams& p, int s, int l) {
  const int row = SIDE == 0 ? s : l, col = SIDE == 0 ? l : s;
  return static_cast<float*>(p.c) + (long long)row * p.ldc + col;
}

// f(s, l) for the outputs first, first + step, ... of the block's strip, consecutive ones on
// consecutive addresses of C (row-major: along L for SIDE=0, along S for SIDE=1).
template <typename F>
__device__ __forceinline__ void for_strip_outputs(const View& v, int first, int step, F f) {
  const int l0 = blockIdx.x * TILE_L, width = min(TILE_L, v.l - l0);
  for (int idx = first; idx < v.s * width; idx += step)
    f(SIDE == 0 ? idx / width : idx % v.s, l0 + (SIDE == 0 ? idx % width : idx / v.s));
}

// One result of the block's slice for C element (s, l) of the small-side view.
__device__ __forceinline__ void emit(const tgemm::GemmParams& p, int s, int l, float v) {
#if SPLIT_MODE == 3
  (void)p;
  cluster_part[s * TILE_L + (l - int(blockIdx.x) * TILE_L)] = v;  // finish_cluster sums them
#else
  float* const c = c_at(p, s, l);
  if (gridDim.y == 1) {
    *c = p.alpha * v + (p.beta != 0.0f ? p.beta * *c : 0.0f);
  } else if (SPLIT_MODE != 0) {
    tgemm::split_k_store_partial(p, blockIdx.y, SIDE == 0 ? s : l, SIDE == 0 ? l : s, v);
  } else {
    atomicAdd(c, p.alpha * v);  // C was scaled by beta first (prepare_strip, before_emit)
  }
#endif
}

// Four results of the block's slice for C elements (s, l..l+3), those at or past `l_end`
// dropped: with atomic slices on sm_90, one 16-byte atomic add where all four are in range and
// C is 16-byte aligned there (a quarter of the atomics); else one emit each.
__device__ __forceinline__ void emit4(const tgemm::GemmParams& p, int s, int l, int l_end,
                                      float4 sum) {
#if SPLIT_MODE == 0 && SIDE == 0 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  float* const c = c_at(p, s, l);
  if (gridDim.y > 1 && l + 3 < l_end && reinterpret_cast<size_t>(c) % 16 == 0) {
    atomicAdd(reinterpret_cast<float4*>(c),
              make_float4(p.alpha * sum.x, p.alpha * sum.y, p.alpha * sum.z, p.alpha * sum.w));
    return;
  }
#endif
  const float part[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int e = 0; e < 4; ++e)
    if (l + e < l_end) emit(p, s, l + e, part[e]);
}

#if SPLIT_MODE == 0
// The strip's first K slice, before its loops: C = beta * C over the strip (0 for beta == 0).
// It flags the strip ready only in before_emit, when the stores have long landed (its fence
// then costs nothing) and the other slices are about as far.
__device__ __forceinline__ void prepare_strip(const tgemm::GemmParams& p, const View& v) {
  for_strip_outputs(v, threadIdx.x, THREADS, [&](int s, int l) {
    float* const c = c_at(p, s, l);
    *c = p.beta != 0.0f ? p.beta * *c : 0.0f;
  });
}
#endif

// Before the block's results go out (every thread): with atomic slices, after the strip's C
// was scaled by its first slice.
__device__ __forceinline__ void before_emit() {
#if SPLIT_MODE == 0
  if (gridDim.y == 1) return;
  if (blockIdx.y == 0) tgemm::publish_tile_ready(&gemv_simt_c_ready[blockIdx.x]);
  tgemm::wait_tile_ready(&gemv_simt_c_ready[blockIdx.x], &gemv_simt_arrivals[blockIdx.x],
                         gridDim.y);
#endif
}

#if W_STORED_ORDER
// Where W(4c.., k0 + kk) goes: its 16-byte chunk's place in row kk (W_STORED_ORDER above).
__device__ __forceinline__ int w_chunk_at(int kk, int c) {
  return kk * W_SO_PITCH + ((c ^ ((kk >> 3) & 3)) * 4);
}

// stage_w for W_STORED_ORDER: row kk of Ws is W(0..15, k0 + kk), zero past S and K.
__device__ __forceinline__ void stage_w_stored_order(const View& v, int k0, int k_end, float* ws) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const bool wide = v.ldw % 4 == 0 && reinterpret_cast<size_t>(v.w) % 16 == 0;
  if (wide) {
    for (int idx = threadIdx.x; idx < KB * 4; idx += THREADS) {
      const int kk = idx / 4, c = idx % 4;
      const int k = k0 + kk;
      const int valid = k < k_end ? max(0, min(4, v.s - 4 * c)) : 0;  // floats to read
      tgemm::cp_async_zfill<16>(ws + w_chunk_at(kk, c),
                                valid > 0 ? v.w + (long long)k * v.ldw + 4 * c : v.w, 4 * valid);
    }
  } else {
    for (int idx = threadIdx.x; idx < KB * 16; idx += THREADS) {
      const int kk = idx / 16, s = idx % 16;
      const int k = k0 + kk;
      const bool valid = s < v.s && k < k_end;
      tgemm::cp_async_zfill<4>(ws + w_chunk_at(kk, s / 4) + s % 4,
                               valid ? v.w + (long long)k * v.ldw + s : v.w, valid ? 4 : 0);
    }
  }
  tgemm::cp_async_commit();
#else
  for (int idx = threadIdx.x; idx < KB * 16; idx += THREADS) {
    const int kk = idx / 16, s = idx % 16;
    const int k = k0 + kk;
    ws[w_chunk_at(kk, s / 4) + s % 4] =
        s < v.s && k < k_end ? v.w[(long long)k * v.ldw + s] : 0.0f;
  }
#endif
}
#endif

// Ws[s][kk] = W(s, k0 + kk) for the block's slice, zero past S and K (so they add nothing).
// On sm_80+ through cp.async, one committed group that w_ready waits for once X's first loads
// are out, so the two latencies overlap (16-byte copies where W's rows are K-contiguous and
// 16-byte aligned); on sm_75 through registers, done when it returns.
__device__ __forceinline__ void stage_w(const View& v, int k0, int k_end, float* ws) {
#if W_STORED_ORDER
  stage_w_stored_order(v, k0, k_end, ws);
  return;
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const bool wide = W_K_CONTIG && v.ldw % 4 == 0 && reinterpret_cast<size_t>(v.w) % 16 == 0;
  if (wide) {
    for (int idx = threadIdx.x; idx < ROWS * KB / 4; idx += THREADS) {
      const int s = idx / (KB / 4), kk = idx % (KB / 4) * 4;
      const int k = k0 + kk;
      const int valid = s < v.s ? max(0, min(4, k_end - k)) : 0;  // floats to read
      tgemm::cp_async_zfill<16>(ws + s * KB + kk, valid > 0 ? v.w + s * v.ldw + k : v.w, 4 * valid);
    }
  } else {
    for (int idx = threadIdx.x; idx < ROWS * KB; idx += THREADS) {
      const int s = W_K_CONTIG ? idx / KB : idx % ROWS;
      const int kk = W_K_CONTIG ? idx % KB : idx / ROWS;
      const int k = k0 + kk;
      const bool valid = s < v.s && k < k_end;
      const float* src = W_K_CONTIG ? v.w + s * v.ldw + k : v.w + (long long)k * v.ldw + s;
      tgemm::cp_async_zfill<4>(ws + s * KB + kk, valid ? src : v.w, valid ? 4 : 0);
    }
  }
  tgemm::cp_async_commit();
#else
  for (int idx = threadIdx.x; idx < ROWS * KB; idx += THREADS) {
    // Consecutive threads take consecutive addresses of W as it is stored.
    const int s = W_K_CONTIG ? idx / KB : idx % ROWS;
    const int kk = W_K_CONTIG ? idx % KB : idx / ROWS;
    const int k = k0 + kk;
    float w = 0.0f;
    if (s < v.s && k < k_end) w = v.w[W_K_CONTIG ? s * v.ldw + k : (long long)k * v.ldw + s];
    ws[s * KB + kk] = w;
  }
#endif
}

// The staged W is readable by every thread: on sm_80+ its cp.async group has landed, with
// PENDING groups (X's first copies) committed after it still allowed in flight.
template <int PENDING>
__device__ __forceinline__ void w_ready() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  tgemm::cp_async_wait<PENDING>();
#endif
  __syncthreads();
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

// out[0..VEC) = the VEC floats at p in shared memory (one VEC-wide read).
__device__ __forceinline__ void read_vec(const float* p, float* out) {
  if (VEC == 4) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    out[0] = q.x;
    out[VEC > 1 ? 1 : 0] = q.y;
    out[VEC > 2 ? 2 : 0] = q.z;
    out[VEC > 3 ? 3 : 0] = q.w;
  } else if (VEC == 2) {
    const float2 q = *reinterpret_cast<const float2*>(p);
    out[0] = q.x;
    out[VEC > 1 ? 1 : 0] = q.y;
  } else {
    out[0] = *p;
  }
}

#if STAGES > 0
// load_x through cp.async into shared memory: one VEC-wide copy when all of it is in range,
// else element-wise, the elements at or past `count` zero-filled (read from `safe`, 0 bytes).
__device__ __forceinline__ void copy_x_async(float* dst, const float* p, int count,
                                             const float* safe) {
  if (count >= VEC) {
    if (VEC == 4) {
      tgemm::cp_async_16(dst, p);
    } else {
      tgemm::cp_async_zfill<VEC * 4>(dst, p, VEC * 4);
    }
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e)
      tgemm::cp_async_zfill<4>(dst + e, e < count ? p + e : safe, e < count ? 4 : 0);
  }
}
#endif

// Rows of C whose warp sums meet in one round of the reduction along L: as many as 16 KB of
// shared memory holds (two barriers a round, so 16 rows in 4 rounds, not 16).
#define RED_FIT (4096 / (WARPS * TILE_L))  // rows of WARPS x TILE_L floats in 16 KB
#define RED_ROWS (RED_FIT < 1 ? 1 : RED_FIT < ROWS ? RED_FIT : ROWS)

// X contiguous along L: lane owns LW vectors of the strip, warps take groups of 4 K values
// in turn, W(s, k..k+3) is one broadcast float4 from shared memory; the warps' sums meet in
// shared memory in warp order, RED_ROWS rows of C at a time.
__device__ __forceinline__ void strip_along_l(const tgemm::GemmParams& p, const View& v, int k0,
                                              int k_end, float* ws) {  // ws: W, then the ring
  __shared__ __align__(16) float red[RED_ROWS][WARPS][TILE_L];
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
  // acc += W(:, 4g..4g+3) x the group's X.
  auto fma_group = [&](int g, const float(&xv)[4][LW][VEC]) {
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
  };
  const int groups = (k_end - k0 + 3) / 4;  // K groups of 4 in this slice
#if STAGES > 0
  // The warp's groups (warp, warp + WARPS, ...) through its ring of STAGES slots: each lane
  // copies and later reads only its own vectors, so cp.async.wait_group alone orders them.
  float* const ring = ws + W_FLOATS + warp * (STAGES * RING_SLOT);
  auto copy_group = [&](int i) {  // the warp's i-th group into slot i % STAGES
    float* const slot = ring + (i % STAGES) * RING_SLOT;
    const int g = warp + i * WARPS;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int k = k0 + 4 * g + j;
#pragma unroll
      for (int u = 0; u < LW; ++u) {
        const int l = l0 + (u * 32 + lane) * VEC;
        const int count = k < k_end ? v.l - l : 0;
        copy_x_async(slot + (j * LW + u) * 32 * VEC + lane * VEC, v.x + (long long)k * v.ldx + l,
                     count, v.x);
      }
    }
  };
  const int mine = groups > warp ? (groups - warp + WARPS - 1) / WARPS : 0;
#pragma unroll
  for (int i = 0; i < STAGES - 1; ++i) {
    if (i < mine) copy_group(i);
    tgemm::cp_async_commit();  // empty groups too: the wait below counts groups
  }
  w_ready<STAGES - 1>();
  for (int i = 0; i < mine; ++i) {
    tgemm::cp_async_wait<STAGES - 2>();  // the i-th group has landed
    float xv[4][LW][VEC];
    const float* const slot = ring + (i % STAGES) * RING_SLOT;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int u = 0; u < LW; ++u) read_vec(slot + (j * LW + u) * 32 * VEC + lane * VEC, xv[j][u]);
    // Refills the slot read one iteration ago (its values were used by then).
    if (i + STAGES - 1 < mine) copy_group(i + STAGES - 1);
    tgemm::cp_async_commit();
    fma_group(warp + i * WARPS, xv);
  }
  tgemm::cp_async_wait<0>();
#else
  // PREFETCH: the warp's next group is loaded before this one's FFMAs, so its loads are in
  // flight while they run (else a warp waits out the memory latency once per group).
  float next[4][LW][VEC];
  if (PREFETCH && warp < groups) load_group(warp, next);
  w_ready<0>();
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
    fma_group(g, xv);
  }
#endif

  before_emit();
#pragma unroll
  for (int s0 = 0; s0 < ROWS; s0 += RED_ROWS) {
    if (s0 >= v.s) break;  // uniform: the rows past S are zero
#pragma unroll
    for (int r = 0; r < RED_ROWS; ++r) {
      const int s = min(s0 + r, ROWS - 1);  // a last round past ROWS stores nothing it reads
#pragma unroll
      for (int u = 0; u < LW; ++u)
#pragma unroll
        for (int e = 0; e < VEC; ++e) red[r][warp][(u * 32 + lane) * VEC + e] = acc[u][s][e];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < RED_ROWS * TILE_L / 4; i += THREADS) {
      const int r = i / (TILE_L / 4), col = i % (TILE_L / 4) * 4;
      float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        const float4 q = *reinterpret_cast<const float4*>(&red[r][w][col]);
        sum.x += q.x;
        sum.y += q.y;
        sum.z += q.z;
        sum.w += q.w;
      }
      if (s0 + r < v.s) emit4(p, s0 + r, l0 + col, v.l, sum);
    }
    __syncthreads();
  }
}

// X contiguous along K: each group of KLANES lanes owns LW rows of the strip and steps through
// the slice's K, VEC values per lane (a group reads KLANES*VEC contiguous floats of a row; the
// warp's 32/KLANES groups read neighbouring rows). W(s, k..) is read as VEC-wide words from
// shared memory, the groups sharing each address. A row's sums meet by a butterfly of shuffles
// within its group. Fewer lanes per row read each W word for more rows (KLANES=8: one shared
// wavefront per 128-byte W read, where 32 lanes need four).
__device__ __forceinline__ void strip_along_k(const tgemm::GemmParams& p, const View& v, int k0,
                                              int k_end, const float* ws) {
  constexpr int kGroups = 32 / KLANES;  // rows of X a warp reads per load
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / KLANES, sub = lane % KLANES;
  // Row (r, group) of the warp is l_first + r * kGroups + group.
  const int l_first = blockIdx.x * TILE_L + warp * LW * kGroups;
  float acc[LW][ROWS];
#pragma unroll
  for (int r = 0; r < LW; ++r)
#pragma unroll
    for (int s = 0; s < ROWS; ++s) acc[r][s] = 0.0f;

  // The lane's LW rows of one step (zero past K).
  auto load_step = [&](int step, float(&xv)[LW][VEC]) {
    const int kk = (step * KLANES + sub) * VEC;
#pragma unroll
    for (int r = 0; r < LW; ++r) {
      // Rows past L repeat the last; never stored.
      const int l = min(l_first + r * kGroups + group, v.l - 1);
      load_x(v.x + (long long)l * v.ldx + k0 + kk, k_end - (k0 + kk), xv[r]);
    }
  };
  // The next step's loads go out before this step's FFMAs, so two steps are in flight per
  // lane. Written out, not left to unrolling: unrolled by 2, ptxas capped some configs at 64
  // or 128 registers and spilled a few bytes.
  const int steps = (k_end - k0 + KLANES * VEC - 1) / (KLANES * VEC);  // this slice's K
  float next[LW][VEC];
  if (steps > 0) load_step(0, next);
  w_ready<0>();
#pragma unroll 1
  for (int step = 0; step < steps; ++step) {
    float xv[LW][VEC];
#pragma unroll
    for (int r = 0; r < LW; ++r)
#pragma unroll
      for (int e = 0; e < VEC; ++e) xv[r][e] = next[r][e];
    if (step + 1 < steps) load_step(step + 1, next);
    const int kk = (step * KLANES + sub) * VEC;
#if W_STORED_ORDER
    // W(4c..4c+3, k) as one read per chunk and K value (the same reads as along K below).
#pragma unroll
    for (int e = 0; e < VEC; ++e)
#pragma unroll
      for (int c = 0; c < (ROWS + 3) / 4; ++c) {
        const float4 w4 = *reinterpret_cast<const float4*>(ws + w_chunk_at(kk + e, c));
        const float w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int i = 0; i < 4 && 4 * c + i < ROWS; ++i)
#pragma unroll
          for (int r = 0; r < LW; ++r)
            acc[r][4 * c + i] = fmaf(w[i], xv[r][e], acc[r][4 * c + i]);
      }
#else
#pragma unroll
    for (int s = 0; s < ROWS; ++s) {
      float w[VEC];
      read_vec(ws + s * KB + kk, w);
#pragma unroll
      for (int r = 0; r < LW; ++r)
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc[r][s] = fmaf(w[e], xv[r][e], acc[r][s]);
    }
#endif
  }

  before_emit();
#pragma unroll
  for (int r = 0; r < LW; ++r)
#pragma unroll
    for (int s = 0; s < ROWS; ++s) {
      // xor offsets below KLANES stay within the group (groups start at multiples of KLANES).
#pragma unroll
      for (int offset = KLANES / 2; offset > 0; offset /= 2)
        acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], offset);
      // A group's lanes take turns storing, so its LW*ROWS stores spread over them.
      const int l = l_first + r * kGroups + group;
      if (sub == (r * ROWS + s) % KLANES && s < v.s && l < v.l) emit(p, s, l, acc[r][s]);
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
  for_strip_outputs(v, threadIdx.x, THREADS, [&](int s, int l) {  // coalesced partials and C
    const int row = SIDE == 0 ? s : l, col = SIDE == 0 ? l : s;
    const float* const part = ws + (long long)row * p.n + col;
    float sum = 0.0f;
    for (int z = 0; z < (int)slices; ++z) sum += __ldcg(part + z * mn);  // L2: not a stale L1
    float* const c = c_at(p, s, l);
    *c = p.alpha * sum + (p.beta != 0.0f ? p.beta * *c : 0.0f);
  });
}
#endif

#if SPLIT_MODE == 3
// After every block of the cluster (the strip's K slices, empty ones past K included) stored its
// sums in cluster_part: each block sums a share of the strip's outputs over the cluster's blocks
// in rank order (the slice order: repeatable, and SPLIT_MODE 1's rounding) and writes C once.
__device__ __forceinline__ void finish_cluster(const tgemm::GemmParams& p, const View& v) {
  tgemm::cluster_sync();
  const int l0 = blockIdx.x * TILE_L;
  const int first = int(tgemm::cluster_rank()) * THREADS + threadIdx.x;
  for_strip_outputs(v, first, CLUSTER * THREADS, [&](int s, int l) {
    const float* const mine = &cluster_part[s * TILE_L + (l - l0)];
    float sum = 0.0f;
#pragma unroll
    for (int b = 0; b < CLUSTER; ++b) sum += tgemm::cluster_load(mine, b);
    float* const c = c_at(p, s, l);
    *c = p.alpha * sum + (p.beta != 0.0f ? p.beta * *c : 0.0f);
  });
  tgemm::cluster_sync();  // no block exits (its shared memory gone) while another reads it
}
#endif

}  // namespace tgemm_gemv

#if SPLIT_MODE == 1
// C = alpha * (the slices' partials in slice order) + beta * C, after the main launch (which
// may start it early: it waits for that grid here).
extern "C" __global__ void gemv_simt_reduce(const tgemm::GemmParams p) {
  tgemm::wait_for_prior_grid();
  tgemm::split_k_reduce<float>(p, tgemm_gemv::slices_of(p.k));
}
#endif

#if SPLIT_MODE == 3
#define GEMV_CLUSTER_DIMS __cluster_dims__(1, CLUSTER, 1)
#else
#define GEMV_CLUSTER_DIMS
#endif

// Grid: x strips of TILE_L along L, y K slices of KB (tgemm_gemv::slices_of; SPLIT_MODE=3:
// CLUSTER, the slices past K empty).
extern "C" __global__ void GEMV_LAUNCH_BOUNDS GEMV_CLUSTER_DIMS
    gemv_simt(const tgemm::GemmParams p) {
  using namespace tgemm_gemv;
  extern __shared__ float4 smem_raw[];  // float4: 16-byte aligned vector reads of W
  float* const ws = reinterpret_cast<float*>(smem_raw);  // W_FLOATS of W, then the ring (STAGES)
#if SPLIT_MODE == 1
  tgemm::allow_next_grid();  // the reduction's blocks may take the SMs this grid leaves idle
#endif
  const View v = tgemm::make_gemv_view<SIDE>(p);
  const int k0 = blockIdx.y * KB;
  const int k_end = min(v.k, k0 + KB);
  stage_w(v, k0, k_end, ws);  // each strip waits for it (w_ready) after its first loads
#if SPLIT_MODE == 0
  if (gridDim.y > 1 && blockIdx.y == 0) prepare_strip(p, v);
#endif
#if X_K_CONTIG  // a preprocessor choice: only the chosen strip's shared memory is allocated
  strip_along_k(p, v, k0, k_end, ws);
#else
  strip_along_l(p, v, k0, k_end, ws);
#endif
#if SPLIT_MODE == 2
  if (gridDim.y > 1) finish_strip(p, v);
#elif SPLIT_MODE == 3
  finish_cluster(p, v);
#endif
}
