// sgemm_warp: warp-tiled FP32 GEMM on the CUDA cores (FFMA), row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
// One block computes a BM x BN tile of C; its warps each own a WM x WN part of it and each
// lane a TM x TN register tile (up to 16 x 8). K is walked in BK-deep slices staged in shared
// memory through a STAGES-deep cp.async pipeline (sm_80+) or register prefetch (sm_75); both
// operands are kept k-major in shared memory (As[k][m], Bs[k][n]), so every fragment is read
// as 128-bit words. Every tunable is a macro with a default; the search space
// (configs/spaces/sgemm_warp.yaml) repeats each static_assert with a readable reason.

#include "common/elements.cuh"
#include "common/gemm_params.h"
#include "common/tile_swizzle.cuh"

// ---- Tunables ---------------------------------------------------------------------
#ifndef BM
#define BM 256  // rows of C per block
#endif
#ifndef BN
#define BN 128  // columns of C per block
#endif
#ifndef BK
#define BK 8  // depth of one K slice in shared memory
#endif
#ifndef WM
#define WM 64  // rows of C per warp
#endif
#ifndef WN
#define WN 64  // columns of C per warp
#endif
#ifndef TM
#define TM 16  // rows of C per thread (register tile), a multiple of 4
#endif
#ifndef TN
#define TN 8  // columns of C per thread (register tile), a multiple of 4
#endif
#ifndef STAGES
#define STAGES 3  // K slices in flight in shared memory (2..4; 2 on sm_75: register prefetch)
#endif
#ifndef VEC
#define VEC 4  // floats per global->shared copy of the operands stored m- or n-contiguous
#endif
#ifndef SPLIT_K
#define SPLIT_K 1  // K is cut into SPLIT_K slices, one per gridDim.z, summed atomically into C
#endif
#ifndef SWIZZLE
#define SWIZZLE 1  // blocks launched in groups of SWIZZLE tile rows, for L2 reuse of B
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1  // blocks per SM the registers must allow (__launch_bounds__)
#endif

// ---- Derived constants --------------------------------------------------------------
#define WARPS_M (BM / WM)  // warps along M in a block
#define WARPS_N (BN / WN)  // warps along N in a block
#define THREADS (WARPS_M * WARPS_N * 32)
#define LANES_M (WM / TM)  // lanes along M in a warp
#define LANES_N (WN / TN)  // lanes along N in a warp
// Floats of one pipeline stage: As[BK][BM] then Bs[BK][BN]. No padding is needed: copies
// and fragment reads both run along the contiguous m / n dimension.
#define STAGE_FLOATS (BK * (BM + BN))

static_assert(TGEMM_TYPE_A == 0 && TGEMM_TYPE_B == 0 && TGEMM_TYPE_C == 0 && TGEMM_COMPUTE == 0,
              "sgemm_warp computes f32 inputs and outputs with FFMA");
static_assert(BM % WM == 0 && BN % WN == 0, "BM and BN must be multiples of WM and WN");
static_assert(WM % TM == 0 && WN % TN == 0, "WM and WN must be multiples of TM and TN");
static_assert(TM % 4 == 0 && TN % 4 == 0, "TM and TN must be multiples of 4 (float4 fragments)");
static_assert(LANES_M * LANES_N == 32, "(WM/TM)*(WN/TN) must be 32: one warp tile per warp");
static_assert(TM * TN <= 128, "at most 128 accumulators per thread");
static_assert(THREADS >= 64 && THREADS <= 1024, "the block must have 2 to 32 warps");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(BM % VEC == 0 && BN % VEC == 0, "BM and BN must be multiples of VEC");
static_assert(BK >= 1, "BK must be at least 1");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES must be 2, 3 or 4");
#if __CUDA_ARCH__ < 800
static_assert(STAGES == 2, "sm_75 has no cp.async: STAGES must be 2 (register prefetch)");
#endif
static_assert(SPLIT_K >= 1, "SPLIT_K must be at least 1");
static_assert(SWIZZLE >= 1, "SWIZZLE must be at least 1");
static_assert(MIN_BLOCKS >= 1, "MIN_BLOCKS must be at least 1");

namespace tgemm_warp {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// Copies BYTES from global to shared asynchronously; bytes past `valid` are zero-filled.
template <int BYTES>
__device__ __forceinline__ void cp_async(float* dst, const float* src, int valid) {
#if __CUDA_ARCH__ >= 800
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)),
                 "l"(src), "r"(valid));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared_address(dst)),
                 "l"(src), "n"(BYTES), "r"(valid));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// An operand slice stored k-contiguous in global memory (A in N layout, B in T layout):
// ROWS rows of BK, to be transposed into S[k][row]. Element e of the slice is row e % ROWS,
// k e / ROWS, so a warp copies 32 consecutive rows at one k: conflict-free 4-byte stores,
// and the BK floats of a row come from one sector through L1 (cp.async.ca).
template <int ROWS>
struct TransposingTile {
  static constexpr int TOTAL = ROWS * BK;
  static constexpr int LOADS = (TOTAL + THREADS - 1) / THREADS;
  float reg[LOADS];  // the register-prefetch path (sm_75) only

  // Where copy l of this thread reads (nullptr when out of range) and writes.
  __device__ __forceinline__ const float* source(const float* g, long long ld, int row0, int k0,
                                                 int row_max, int k_end, int l, int* s) const {
    const int e = threadIdx.x + l * THREADS;
    const int r = e % ROWS, k = e / ROWS;
    *s = e;  // = k * ROWS + r
    if (TOTAL % THREADS != 0 && e >= TOTAL) {
      *s = -1;
      return nullptr;
    }
    if (row0 + r >= row_max || k0 + k >= k_end) return nullptr;
    return g + (long long)(row0 + r) * ld + (k0 + k);
  }

  __device__ __forceinline__ void issue(float* s, const float* g, long long ld, int row0, int k0,
                                        int row_max, int k_end) const {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      int at;
      const float* src = source(g, ld, row0, k0, row_max, k_end, l, &at);
      if (at >= 0) cp_async<4>(s + at, src ? src : g, src ? 4 : 0);
    }
  }

  __device__ __forceinline__ void load(const float* g, long long ld, int row0, int k0, int row_max,
                                       int k_end) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      int at;
      const float* src = source(g, ld, row0, k0, row_max, k_end, l, &at);
      reg[l] = src ? *src : 0.0f;
    }
  }

  __device__ __forceinline__ void store(float* s) const {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const int e = threadIdx.x + l * THREADS;
      if (TOTAL % THREADS == 0 || e < TOTAL) s[e] = reg[l];
    }
  }
};

// An operand slice stored m- or n-contiguous in global memory (A in T layout, B in N
// layout): BK rows of COLS, copied as they are into S[k][col], VEC floats per copy.
template <int COLS>
struct DirectTile {
  static constexpr int VECS_PER_ROW = COLS / VEC;
  static constexpr int TOTAL = BK * VECS_PER_ROW;
  static constexpr int LOADS = (TOTAL + THREADS - 1) / THREADS;
  float reg[LOADS][VEC];  // the register-prefetch path (sm_75) only

  // Where copy l of this thread reads and writes, and how many of its VEC floats are in
  // range (-1: this thread has no copy l).
  __device__ __forceinline__ int source(const float* g, long long ld, int k0, int col0, int k_end,
                                        int col_max, int l, const float** src, int* s) const {
    const int v = threadIdx.x + l * THREADS;
    const int k = v / VECS_PER_ROW, c = (v % VECS_PER_ROW) * VEC;
    *s = k * COLS + c;
    *src = g;
    if (TOTAL % THREADS != 0 && v >= TOTAL) return -1;
    if (k0 + k >= k_end) return 0;
    const int valid = min(VEC, max(0, col_max - (col0 + c)));
    if (valid > 0) *src = g + (long long)(k0 + k) * ld + (col0 + c);
    return valid;
  }

  __device__ __forceinline__ void issue(float* s, const float* g, long long ld, int k0, int col0,
                                        int k_end, int col_max) const {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const float* src;
      int at;
      const int valid = source(g, ld, k0, col0, k_end, col_max, l, &src, &at);
      if (valid >= 0) cp_async<VEC * 4>(s + at, src, valid * 4);
    }
  }

  __device__ __forceinline__ void load(const float* g, long long ld, int k0, int col0, int k_end,
                                       int col_max) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const float* src;
      int at;
      const int valid = source(g, ld, k0, col0, k_end, col_max, l, &src, &at);
      if (valid == VEC && VEC == 4) {
        const float4 x = *reinterpret_cast<const float4*>(src);
        reg[l][0] = x.x;
        reg[l][VEC > 1 ? 1 : 0] = x.y;
        reg[l][VEC > 2 ? 2 : 0] = x.z;
        reg[l][VEC > 3 ? 3 : 0] = x.w;
      } else if (valid == VEC && VEC == 2) {
        const float2 x = *reinterpret_cast<const float2*>(src);
        reg[l][0] = x.x;
        reg[l][VEC > 1 ? 1 : 0] = x.y;
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) reg[l][e] = e < valid ? src[e] : 0.0f;
      }
    }
  }

  __device__ __forceinline__ void store(float* s) const {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const int v = threadIdx.x + l * THREADS;
      if (TOTAL % THREADS != 0 && v >= TOTAL) continue;
      float* dst = s + (v / VECS_PER_ROW) * COLS + (v % VECS_PER_ROW) * VEC;
      if (VEC == 4)
        *reinterpret_cast<float4*>(dst) = make_float4(
            reg[l][0], reg[l][VEC > 1 ? 1 : 0], reg[l][VEC > 2 ? 2 : 0], reg[l][VEC > 3 ? 3 : 0]);
      else if (VEC == 2)
        *reinterpret_cast<float2*>(dst) = make_float2(reg[l][0], reg[l][VEC > 1 ? 1 : 0]);
      else
        dst[0] = reg[l][0];
    }
  }
};

// TM (TN) floats of row kk of a k-major tile: 4-float chunks LANES*4 apart, one LDS.128 each.
template <int COUNT, int LANES>
__device__ __forceinline__ void read_fragment(const float* row, float* out) {
#pragma unroll
  for (int c = 0; c < COUNT / 4; ++c) {
    const float4 x = *reinterpret_cast<const float4*>(row + c * LANES * 4);
    out[c * 4 + 0] = x.x;
    out[c * 4 + 1] = x.y;
    out[c * 4 + 2] = x.z;
    out[c * 4 + 3] = x.w;
  }
}

// Writes one 4-wide chunk of a C row: float4 where C allows it, else element by element.
__device__ __forceinline__ void store_chunk(const tgemm::GemmParams& p, float* c_row, int col,
                                            const float* r) {
  if (SPLIT_K > 1) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (col + j < p.n) atomicAdd(c_row + col + j, p.alpha * r[j]);
  } else if (p.c_aligned16 && col + 4 <= p.n) {
    float4 out = make_float4(p.alpha * r[0], p.alpha * r[1], p.alpha * r[2], p.alpha * r[3]);
    float4* dst = reinterpret_cast<float4*>(c_row + col);
    if (p.beta != 0.0f) {
      const float4 old = *dst;
      out.x += p.beta * old.x;
      out.y += p.beta * old.y;
      out.z += p.beta * old.z;
      out.w += p.beta * old.w;
    }
    *dst = out;
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (col + j >= p.n) continue;
      const float old = p.beta != 0.0f ? p.beta * c_row[col + j] : 0.0f;
      c_row[col + j] = p.alpha * r[j] + old;
    }
  }
}

}  // namespace tgemm_warp

// C = beta * C (zero when beta == 0): run before a split-K launch, whose slices add into C.
extern "C" __global__ void sgemm_warp_prepare_c(const tgemm::GemmParams p) {
  tgemm::scale_c_by_beta<float>(p);
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    sgemm_warp(const tgemm::GemmParams p) {
  using namespace tgemm_warp;
  extern __shared__ float4 smem_raw[];  // float4: 16-byte alignment for LDS.128 / cp.async
  float* const smem = reinterpret_cast<float*>(smem_raw);  // STAGES x (As[BK][BM], Bs[BK][BN])

  const float* const a_ptr = static_cast<const float*>(p.a);
  const float* const b_ptr = static_cast<const float*>(p.b);
  float* const c_ptr = static_cast<float*>(p.c);
  int tile_m, tile_n;  // this block's tile of C, SWIZZLE tile rows launched together
  tgemm::swizzled_tile(SWIZZLE, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;

  // This split-K slice covers k in [k_begin, k_end), whole BK slices apart from the last.
  const int k_tiles_total = (p.k + BK - 1) / BK;
  const int k_tiles_per_split = (k_tiles_total + SPLIT_K - 1) / SPLIT_K;
  const int k_begin = blockIdx.z * k_tiles_per_split * BK;
  const int k_end = min(p.k, k_begin + k_tiles_per_split * BK);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

  // Warp (warp_m, warp_n) owns rows wm0.. and columns wn0.. of the block tile; lane
  // (lane_m, lane_n) owns 4x4 chunks of it, LANES_M*4 rows and LANES_N*4 columns apart.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int lane_m = lane / LANES_N, lane_n = lane % LANES_N;
  const int a_col = wm0 + lane_m * 4, b_col = wn0 + lane_n * 4;  // first fragment columns

  // A: N layout is BM rows of k (transposed on the way in); T layout is k rows of BM.
  // B: N layout is k rows of BN; T layout is BN rows of k (transposed).
  TransposingTile<BM> a_rows;
  DirectTile<BM> a_cols;
  TransposingTile<BN> b_rows;
  DirectTile<BN> b_cols;
#if __CUDA_ARCH__ >= 800
  auto issue_slice = [&](int t, int stage) {
    const int k0 = k_begin + t * BK;
    float* const as = smem + stage * STAGE_FLOATS;
    float* const bs = as + BK * BM;
    if (TGEMM_OP_A)
      a_cols.issue(as, a_ptr, p.lda, k0, m0, k_end, p.m);
    else
      a_rows.issue(as, a_ptr, p.lda, m0, k0, p.m, k_end);
    if (TGEMM_OP_B)
      b_rows.issue(bs, b_ptr, p.ldb, n0, k0, p.n, k_end);
    else
      b_cols.issue(bs, b_ptr, p.ldb, k0, n0, k_end, p.n);
  };
#else
  auto load_slice = [&](int t) {
    const int k0 = k_begin + t * BK;
    if (TGEMM_OP_A)
      a_cols.load(a_ptr, p.lda, k0, m0, k_end, p.m);
    else
      a_rows.load(a_ptr, p.lda, m0, k0, p.m, k_end);
    if (TGEMM_OP_B)
      b_rows.load(b_ptr, p.ldb, n0, k0, p.n, k_end);
    else
      b_cols.load(b_ptr, p.ldb, k0, n0, k_end, p.n);
  };
  auto store_slice = [&](int stage) {
    float* const as = smem + stage * STAGE_FLOATS;
    if (TGEMM_OP_A)
      a_cols.store(as);
    else
      a_rows.store(as);
    if (TGEMM_OP_B)
      b_rows.store(as + BK * BM);
    else
      b_cols.store(as + BK * BM);
  };
#endif

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // The FFMAs of one staged slice; fragments are double-buffered in registers, so the
  // shared-memory reads of row kk+1 are in flight during the FFMAs of row kk.
  auto compute_slice = [&](const float* as) {
    const float* const bs = as + BK * BM;
    float a[2][TM], b[2][TN];
    read_fragment<TM, LANES_M>(as + a_col, a[0]);
    read_fragment<TN, LANES_N>(bs + b_col, b[0]);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk + 1 < BK) {
        read_fragment<TM, LANES_M>(as + (kk + 1) * BM + a_col, a[(kk + 1) % 2]);
        read_fragment<TN, LANES_N>(bs + (kk + 1) * BN + b_col, b[(kk + 1) % 2]);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[kk % 2][i], b[kk % 2][j], acc[i][j]);
    }
  };

#if __CUDA_ARCH__ >= 800
  // Slices 0..STAGES-2 in flight first; then each step waits for slice t, refills the stage
  // that step t-1 read (the barrier proves everyone is done with it) and computes slice t.
  // Every step commits a group, empty or not, so wait_group counts slices.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) issue_slice(s, s);
    cp_async_commit();
  }
  int read_stage = 0, write_stage = STAGES - 1;
  for (int t = 0; t < k_tiles; ++t) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (t + STAGES - 1 < k_tiles) issue_slice(t + STAGES - 1, write_stage);
    cp_async_commit();
    compute_slice(smem + read_stage * STAGE_FLOATS);
    read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();
#else
  // Register prefetch: slice t+1 is read into registers during slice t's FFMAs, then stored
  // into the other stage, which step t-1 read before the barrier that closed it.
  if (k_tiles > 0) {
    load_slice(0);
    store_slice(0);
    __syncthreads();
  }
  for (int t = 0; t < k_tiles; ++t) {
    const int cur = t & 1;
    const bool has_next = t + 1 < k_tiles;
    if (has_next) load_slice(t + 1);
    compute_slice(smem + cur * STAGE_FLOATS);
    if (has_next) store_slice(cur ^ 1);
    __syncthreads();
  }
#endif

  // Epilogue: accumulator row cm*4+i is C row m0 + a_col + cm*LANES_M*4 + i, and column
  // chunk cn is C columns n0 + b_col + cn*LANES_N*4 ..+3.
#pragma unroll
  for (int cm = 0; cm < TM / 4; ++cm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = m0 + a_col + cm * LANES_M * 4 + i;
      if (row >= p.m) continue;
      float* const c_row = c_ptr + (long long)row * p.ldc;
#pragma unroll
      for (int cn = 0; cn < TN / 4; ++cn)
        store_chunk(p, c_row, n0 + b_col + cn * LANES_N * 4, &acc[cm * 4 + i][cn * 4]);
    }
}
