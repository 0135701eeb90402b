// sgemm_warp: warp-tiled FP32 GEMM on the CUDA cores (FFMA), row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
// One block computes a BM x BN tile of C; its warps each own a WM x WN part of it and each
// lane a TM x TN register tile (up to 16 x 8). K is walked in BK-deep slices staged in shared
// memory through a STAGES-deep cp.async pipeline (sm_80+) or register prefetch (sm_75); both
// operands are kept k-major in shared memory (As[k][m], Bs[k][n], rows padded by 4 floats),
// so every fragment is read as 128-bit words. Every tunable is a macro with a default; the search
// space (configs/spaces/sgemm_warp.yaml) repeats each static_assert with a readable reason.

#include "common/async_copy.cuh"
#include "common/batch.cuh"
#include "common/elements.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_params.h"
#include "common/pack_operand.cuh"
#include "common/stream_tail.cuh"
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
#ifndef TAIL_SPLIT
#define TAIL_SPLIT 1  // >1: the tiles past the last whole wave run as TAIL_SPLIT K slices each
#endif
#ifndef SWIZZLE
#define SWIZZLE 1  // blocks launched in groups of SWIZZLE tile rows, for L2 reuse of B
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1  // blocks per SM the registers must allow (__launch_bounds__)
#endif
#ifndef PACK_B
#define PACK_B 0  // 1: B first copied into the workspace as [k][n], rows padded to whole tiles
#endif

// The layout sgemm_warp_pack_b reads (the caller's) and, as TGEMM_OP_B from here on, the one
// the main kernel reads: a packed B is always [k][n] (VEC-wide copies at any alignment, no
// transposing 4-byte copies for a k-contiguous B).
#if TGEMM_OP_B
#define TGEMM_SRC_OP_B 1
#else
#define TGEMM_SRC_OP_B 0
#endif
#if PACK_B
#undef TGEMM_OP_B
#define TGEMM_OP_B 0
#endif

// ---- Derived constants --------------------------------------------------------------
#define WARPS_M (BM / WM)  // warps along M in a block
#define WARPS_N (BN / WN)  // warps along N in a block
#define THREADS (WARPS_M * WARPS_N * 32)
#define LANES_M (WM / TM)  // lanes along M in a warp
#define LANES_N (WN / TN)  // lanes along N in a warp
// Shared rows are padded by 4 floats: the transposing copies then store k-row kk at bank
// offset 4*kk, so 8 k by 4 rows hit 32 banks, and float4 reads stay 16-byte aligned.
#define SMEM_PAD 4
#define A_STRIDE (BM + SMEM_PAD)  // floats between k-rows of As
#define B_STRIDE (BN + SMEM_PAD)  // floats between k-rows of Bs
// Floats of one pipeline stage: As[BK][A_STRIDE] then Bs[BK][B_STRIDE].
#define STAGE_FLOATS (BK * (A_STRIDE + B_STRIDE))

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
static_assert(BK >= 2 && BK % 2 == 0,
              "BK must be even: the fragment buffers alternate across slices");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES must be 2, 3 or 4");
static_assert(PACK_B == 0 || PACK_B == 1, "PACK_B must be 0 or 1");
#if __CUDA_ARCH__ < 800
static_assert(STAGES == 2, "sm_75 has no cp.async: STAGES must be 2 (register prefetch)");
#endif
static_assert(SPLIT_K >= 1, "SPLIT_K must be at least 1");
static_assert(TAIL_SPLIT >= 1, "TAIL_SPLIT must be at least 1");
static_assert(SPLIT_K == 1 || TAIL_SPLIT == 1, "SPLIT_K and TAIL_SPLIT cannot both cut K");
static_assert(
    SPLIT_K == 1 || !TGEMM_EPILOGUE,
    "split-K adds its slices atomically into C: no slice is the last, to apply an epilogue");
static_assert(SWIZZLE >= 1, "SWIZZLE must be at least 1");
static_assert(MIN_BLOCKS >= 1, "MIN_BLOCKS must be at least 1");

namespace tgemm_warp {

// Where copy l of a thread lies in a slice tile of OUTER x INNER elements (copies of one
// element each, element e = tid + l * THREADS at inner e % INNER, outer e / INNER): the
// thread's own base (outer_t, inner_t), set once, plus (outer, inner) of copy l. When the
// block's threads tile whole rows or rows tile the threads, the second part is a
// compile-time constant, so a copy costs an address add, a compare and the copy itself.
template <int OUTER, int INNER>
struct CopyMap {
  static constexpr int TOTAL = OUTER * INNER;
  static constexpr int LOADS = (TOTAL + THREADS - 1) / THREADS;
  static constexpr bool FIXED =
      TOTAL % THREADS == 0 && (THREADS % INNER == 0 || INNER % THREADS == 0);

  __device__ __forceinline__ static void base(int* outer_t, int* inner_t) {
    const int tid = threadIdx.x;
    *outer_t = FIXED ? (THREADS % INNER == 0 ? tid / INNER : 0) : 0;
    *inner_t = FIXED ? (THREADS % INNER == 0 ? tid % INNER : tid) : 0;
  }
  // False when this thread has no copy l (only where THREADS does not divide TOTAL).
  __device__ __forceinline__ static bool copy(int l, int* outer, int* inner) {
    if (FIXED) {
      *outer = THREADS % INNER == 0 ? l * (THREADS / INNER) : l * THREADS / INNER;
      *inner = THREADS % INNER == 0 ? 0 : l * THREADS % INNER;
      return true;
    }
    const int e = threadIdx.x + l * THREADS;
    *outer = e / INNER;
    *inner = e % INNER;
    return TOTAL % THREADS == 0 || e < TOTAL;
  }
};

// An operand slice stored k-contiguous in global memory (A in N layout, B in T layout):
// ROWS rows of BK, transposed into S[k][row] (row stride ROWS + SMEM_PAD). Lanes run along
// k first, KL floats of a row, then along rows, then along k groups: a warp reads 32 / KL
// rows of KL contiguous floats (whole 32-byte sectors) and stores them to banks 4k + row,
// all distinct.
template <int ROWS>
struct TransposingTile {
  static constexpr int KL = BK % 8 == 0 ? 8 : BK;  // k per lane group (one sector of a row)
  static constexpr int STRIDE = ROWS + SMEM_PAD;
  // Copies run over (k group, row, k in group); outer = k group * ROWS + row.
  using Map = CopyMap<ROWS*(BK / KL), KL>;
  static constexpr int LOADS = Map::LOADS;
  static constexpr bool FIXED =
      Map::FIXED && THREADS % KL == 0 && (ROWS % (THREADS / KL) == 0 || (THREADS / KL) % ROWS == 0);
  const float* first;  // this thread's element of slice 0 (row_t, k_t)
  const float* next;   // the same for the next unpredicated slice (they come in order)
  int rows_left;       // rows of the operand from row_t on
  int k_skip;          // slice 0's k below this (relative to k_t) lie before the split's range
  int at;              // this thread's element of a stage: k_t * STRIDE + row_t
  float reg[LOADS];    // the register-prefetch path (sm_75) only

  // Row and k of copy l relative to the thread's own: compile-time constants when FIXED
  // (the thread's rows then never wrap), else the whole place from a base of (0, 0).
  __device__ __forceinline__ static bool place(int l, int* row, int* k) {
    int outer, inner;
    bool has = true;
    if (FIXED) {
      Map::copy(l, &outer, &inner);
    } else {
      const int e = threadIdx.x + l * THREADS;
      outer = e / KL;
      inner = e % KL;
      has = Map::TOTAL % THREADS == 0 || e < Map::TOTAL;
    }
    *row = outer % ROWS;
    *k = outer / ROWS * KL + inner;
    return has;
  }

  // Slice t covers k_first + t * BK ..+BK; slice 0's first `skip` k are not the operand's.
  __device__ __forceinline__ void init(const float* g, long long ld, int row0, int row_max,
                                       int k_first, int skip) {
    int outer = 0, inner = 0, row_t = 0, k_t = 0;
    if (FIXED) {
      Map::base(&outer, &inner);
      row_t = outer % ROWS;
      k_t = outer / ROWS * KL + inner;
    }
    first = g + (long long)(row0 + row_t) * ld + (k_first + k_t);
    next = first + BK;
    rows_left = row_max - row0 - row_t;
    k_skip = skip - k_t;
    at = k_t * STRIDE + row_t;
  }

  // Copy l of slice t: -1 when the thread has none, else whether it is in range; its source
  // (g, never read, when it is not) and its shared offset.
  __device__ __forceinline__ int source(const float* g, long long ld, int t, int l,
                                        const float** src, int* s) const {
    int r, k;
    if (!place(l, &r, &k)) return -1;
    *s = at + k * STRIDE + r;
    const bool ok = r < rows_left && (t > 0 || k >= k_skip);
    *src = ok ? first + (long long)t * BK + r * ld + k : g;
    return ok;
  }

  // WHOLE: slices 1, 2, ... in order, whole in K. A row past the operand's last is zero-filled
  // from a clamped address; the clamp and the test are loop-invariant, so a slice adds only its
  // base (the per-slice address work of the predicated path made edge blocks 7-15 % slower).
  template <bool WHOLE>
  __device__ __forceinline__ void issue(unsigned s, const float* g, long long ld, int t) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      int r, k;
      if constexpr (WHOLE) {
        if (place(l, &r, &k))
          tgemm::cp_async_or_zero_unordered<4>(s + (at + k * STRIDE + r) * 4,
                              next + (long long)min(r, rows_left - 1) * ld + k, r < rows_left);
      } else {
        const float* src;
        int off;
        const int ok = source(g, ld, t, l, &src, &off);
        if (ok >= 0) tgemm::cp_async_or_zero_unordered<4>(s + off * 4, src, ok);
      }
    }
    if (WHOLE) next += BK;
  }

  __device__ __forceinline__ void load(const float* g, long long ld, int t) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const float* src;
      int off;
      reg[l] = source(g, ld, t, l, &src, &off) > 0 ? *src : 0.0f;
    }
  }

  __device__ __forceinline__ void store(float* s) const {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      int r, k;
      if (place(l, &r, &k)) s[at + k * STRIDE + r] = reg[l];
    }
  }
};

// An operand slice stored m- or n-contiguous in global memory (A in T layout, B in N
// layout): BK rows of COLS, copied as they are into S[k][col] (row stride COLS + SMEM_PAD),
// VEC floats per copy.
template <int COLS>
struct DirectTile {
  static constexpr int STRIDE = COLS + SMEM_PAD;
  using Map = CopyMap<BK, COLS / VEC>;  // outer = k, inner = vector of the row
  static constexpr int LOADS = Map::LOADS;
  const float* first;     // this thread's vector of slice 0 (k_t, col_t)
  const float* next;      // the same for the next unpredicated slice (they come in order)
  int cols_left;          // columns of the operand from col_t on
  int k_skip;             // slice 0's k below this (relative to k_t) lie before the split's range
  int at;                 // this thread's vector in a stage: k_t * STRIDE + col_t
  bool cols_full;         // every copy of this thread has all VEC columns in range
  float reg[LOADS][VEC];  // the register-prefetch path (sm_75) only

  __device__ __forceinline__ void init(const float* g, long long ld, int col0, int col_max,
                                       int k_first, int skip) {
    int k_t, v_t;
    Map::base(&k_t, &v_t);
    const int col_t = v_t * VEC;
    first = g + (long long)(k_first + k_t) * ld + (col0 + col_t);
    next = first + BK * ld;
    cols_left = col_max - col0 - col_t;
    k_skip = skip - k_t;
    at = k_t * STRIDE + col_t;
    int widest = 0;  // the largest column offset of this thread's copies
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      int k, v;
      if (Map::copy(l, &k, &v)) widest = max(widest, v * VEC);
    }
    cols_full = cols_left >= widest + VEC;
  }

  // Copy l of slice t: how many of its VEC floats are in range (-1: no copy l), its source
  // (g, never read, when none is) and its shared offset.
  __device__ __forceinline__ int source(const float* g, long long ld, int t, int l,
                                        const float** src, int* s) const {
    int k, v;
    if (!Map::copy(l, &k, &v)) return -1;
    const int c = v * VEC;
    *s = at + k * STRIDE + c;
    const bool k_ok = t > 0 || k >= k_skip;
    const int valid = !k_ok ? 0 : cols_full ? VEC : min(VEC, max(0, cols_left - c));
    // BK * ld and k * ld (k a constant when FIXED) are loop-invariant: one add per slice.
    *src = valid > 0 ? first + (long long)t * (BK * ld) + k * ld + c : g;
    return valid;
  }

  // WHOLE (slices 1, 2, ... in order, whole in K): whole vectors are copied unpredicated and a
  // 4-byte copy past the operand's last column is zero-filled from a clamped address (both
  // loop-invariant); a vector partly past it takes the predicated path. Otherwise every copy
  // is predicated.
  template <bool WHOLE>
  __device__ __forceinline__ void issue(unsigned s, const float* g, long long ld, int t) {
    if (WHOLE && (VEC == 1 || cols_full)) {
#pragma unroll
      for (int l = 0; l < LOADS; ++l) {
        int k, v;
        if (!Map::copy(l, &k, &v)) continue;
        const unsigned dst = s + (at + k * STRIDE + v * VEC) * 4;
        if (VEC == 1)
          tgemm::cp_async_or_zero_unordered<4>(dst, next + k * ld + min(v, cols_left - 1), v < cols_left);
        else
          tgemm::cp_async_whole_unordered<VEC * 4>(dst, next + k * ld + v * VEC);
      }
      next += BK * ld;
    } else {
#pragma unroll
      for (int l = 0; l < LOADS; ++l) {
        const float* src;
        int off;
        const int valid = source(g, ld, t, l, &src, &off);
        if (valid < 0) continue;
        if (VEC == 1 || cols_full)
          tgemm::cp_async_or_zero_unordered<VEC * 4>(s + off * 4, src, valid > 0);
        else
          tgemm::cp_async_unordered<VEC * 4>(s + off * 4, src, valid * 4);
      }
    }
  }

  __device__ __forceinline__ void load(const float* g, long long ld, int t) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const float* src;
      int off;
      const int valid = source(g, ld, t, l, &src, &off);
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
      int k, v;
      if (!Map::copy(l, &k, &v)) continue;
      float* dst = s + at + k * STRIDE + v * VEC;
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

namespace tgemm_warp {
// Where sgemm_warp_pack_b puts B (K x N, n-contiguous) in the workspace; the host's plan
// (src/templates/sgemm_warp.cpp) asks the same function for the bytes.
__device__ __forceinline__ tgemm::PackedLayout packed_b(const tgemm::GemmParams& p) {
  return tgemm::packed_layout(p.k, p.n, BK, BN, 4);
}
struct SameWord {
  __device__ unsigned operator()(unsigned w) const { return w; }
};
}  // namespace tgemm_warp

#if PACK_B
// B copied as [k][n] into the workspace: transposed from [n][k] (T layout), else re-strided.
extern "C" __global__ void sgemm_warp_pack_b(const tgemm::GemmParams p) {
  const tgemm::PackedLayout to = tgemm_warp::packed_b(p);
#if TGEMM_SRC_OP_B
  tgemm::pack_operand_transposed32(p.b, p.ldb, p.n, p.k, p.workspace, to, tgemm_warp::SameWord{});
#else
  tgemm::pack_operand<4>(p.b, p.ldb, p.k, p.n, p.workspace, to, tgemm_warp::SameWord{});
#endif
}
#endif

#if TAIL_SPLIT > 1
// Slices of each tail tile that have finished (common/stream_tail.cuh).
__device__ unsigned int sgemm_warp_tail_arrivals[tgemm::kStreamTailMaxTiles];

namespace tgemm_warp {
// A tail tile's TAIL_SPLIT partial tiles in the workspace, after the packed B: slice s of tail
// tile i at [i][s], each thread's TM x TN floats as float4 chunk c at (c * THREADS + tid) * 4.
__device__ __forceinline__ float* tail_partials(const tgemm::GemmParams& p, int tail_index) {
  char* const base = static_cast<char*>(p.workspace) + (PACK_B ? packed_b(p).bytes : 0);
  return reinterpret_cast<float*>(base) + (long long)tail_index * TAIL_SPLIT * BM * BN;
}

// A tail slice stores its partial sums; the last of its tile's slices to finish replaces its
// own with the sum of all of them in slice order and returns true (it then writes C).
__device__ __forceinline__ bool tail_handover(const tgemm::GemmParams& p,
                                              const tgemm::StreamTailWork& w,
                                              float (&acc)[TM][TN]) {
  float4* const parts = reinterpret_cast<float4*>(tail_partials(p, w.tail_index));
  constexpr int CHUNKS = TM * TN / 4, TILE_CHUNKS = BM * BN / 4;
  float4* const mine = parts + (long long)w.slice * TILE_CHUNKS + threadIdx.x;
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    const float* const r = &acc[c / (TN / 4)][c % (TN / 4) * 4];
    mine[c * THREADS] = make_float4(r[0], r[1], r[2], r[3]);
  }
  if (!tgemm::stream_tail_last_to_arrive(&sgemm_warp_tail_arrivals[w.tail_index], TAIL_SPLIT))
    return false;
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c) {
    float4 sum = __ldcg(parts + c * THREADS + threadIdx.x);
    for (int s = 1; s < TAIL_SPLIT; ++s) {
      const float4 x = __ldcg(parts + (long long)s * TILE_CHUNKS + c * THREADS + threadIdx.x);
      sum.x += x.x;
      sum.y += x.y;
      sum.z += x.z;
      sum.w += x.w;
    }
    float* const r = &acc[c / (TN / 4)][c % (TN / 4) * 4];
    r[0] = sum.x;
    r[1] = sum.y;
    r[2] = sum.z;
    r[3] = sum.w;
  }
  return true;
}
}  // namespace tgemm_warp
#endif

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    sgemm_warp(const tgemm::GemmParams batched TGEMM_EPILOGUE_PARAMETER) {
  using namespace tgemm_warp;
  const tgemm::GemmParams& p = tgemm::batch_operands<SPLIT_K>(batched);  // this block's A, B
  extern __shared__ float4 smem_raw[];  // float4: 16-byte alignment for LDS.128 / cp.async
  float* const smem = reinterpret_cast<float*>(smem_raw);  // STAGES x (As, Bs), padded rows

  const float* const a_ptr = static_cast<const float*>(p.a);
#if PACK_B
  const float* const b_ptr = static_cast<const float*>(p.workspace);
  const long long ldb = tgemm_warp::packed_b(p).ld;
#else
  const float* const b_ptr = static_cast<const float*>(p.b);
  const long long ldb = p.ldb;
#endif
  int tile_m, tile_n;  // this block's tile of C, SWIZZLE tile rows launched together
#if TAIL_SPLIT > 1
  // A 1-D grid: the whole tiles, then the tail's (common/stream_tail.cuh).
  const int grid_m = (p.m + BM - 1) / BM, grid_n = (p.n + BN - 1) / BN;
  const tgemm::StreamTailWork work = tgemm::stream_tail_work(grid_m * grid_n, TAIL_SPLIT);
  tgemm::swizzled_tile_of(work.tile, grid_m, grid_n, SWIZZLE, &tile_m, &tile_n);
  const int slice = work.slice, slices = work.slices;
#else
  tgemm::swizzled_tile(SWIZZLE, &tile_m, &tile_n);
  const int slice = tgemm::split_k_slice<SPLIT_K>(), slices = SPLIT_K;
#endif
  const int m0 = tile_m * BM, n0 = tile_n * BN;

  // This K slice covers k in [k_begin, k_end), whole BK slices apart from the last.
  const tgemm::KSlice ks = tgemm::k_slice(p.k, BK, slices, slice);
  const int k_begin = ks.begin, k_end = ks.end, k_tiles = ks.tiles;
  // The partial slice comes first: slice t covers k_first + t*BK ..+BK, and slice 0's first
  // `skip` k (before k_begin) are zero-filled, so every later slice is whole in K.
  const int skip = k_tiles * BK - (k_end - k_begin);
  const int k_first = k_begin - skip;

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
  if (TGEMM_OP_A)
    a_cols.init(a_ptr, p.lda, m0, p.m, k_first, skip);
  else
    a_rows.init(a_ptr, p.lda, m0, p.m, k_first, skip);
  if (TGEMM_OP_B)
    b_rows.init(b_ptr, ldb, n0, p.n, k_first, skip);
  else
    b_cols.init(b_ptr, ldb, n0, p.n, k_first, skip);
#if __CUDA_ARCH__ >= 800
  const unsigned smem_bytes0 = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  // Slice t (only 0) into the stage at byte address as: every copy predicated (k and edges).
  auto issue_predicated = [&](int t, unsigned as) {
    const unsigned bs = as + BK * A_STRIDE * 4;
    if (TGEMM_OP_A)
      a_cols.template issue<false>(as, a_ptr, p.lda, t);
    else
      a_rows.template issue<false>(as, a_ptr, p.lda, t);
    if (TGEMM_OP_B)
      b_rows.template issue<false>(bs, b_ptr, ldb, t);
    else
      b_cols.template issue<false>(bs, b_ptr, ldb, t);
  };
  auto issue_whole = [&](int t, unsigned as) {
    const unsigned bs = as + BK * A_STRIDE * 4;
    if (TGEMM_OP_A)
      a_cols.template issue<true>(as, a_ptr, p.lda, t);
    else
      a_rows.template issue<true>(as, a_ptr, p.lda, t);
    if (TGEMM_OP_B)
      b_rows.template issue<true>(bs, b_ptr, ldb, t);
    else
      b_cols.template issue<true>(bs, b_ptr, ldb, t);
  };
  // Slice t > 0 into the stage stage_off floats from smem: the same path in every block, edge
  // blocks included (one wave of blocks runs as slow as its slowest).
  auto issue_slice = [&](int t, int stage_off) { issue_whole(t, smem_bytes0 + stage_off * 4); };
#else
  auto load_slice = [&](int t) {
    if (TGEMM_OP_A)
      a_cols.load(a_ptr, p.lda, t);
    else
      a_rows.load(a_ptr, p.lda, t);
    if (TGEMM_OP_B)
      b_rows.load(b_ptr, ldb, t);
    else
      b_cols.load(b_ptr, ldb, t);
  };
  auto store_slice = [&](int stage_off) {
    float* const as = smem + stage_off;
    if (TGEMM_OP_A)
      a_cols.store(as);
    else
      a_rows.store(as);
    if (TGEMM_OP_B)
      b_rows.store(as + BK * A_STRIDE);
    else
      b_cols.store(as + BK * A_STRIDE);
  };
#endif

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // Fragments of k-row kk of a stage; two register buffers, so the shared-memory reads of
  // row kk+1 (the next slice's row 0 at the last kk) are in flight during row kk's FFMAs.
  float a[2][TM], b[2][TN];
  auto read_fragments = [&](int stage_off, int kk, int buf) {
    const float* const as = smem + stage_off;
    read_fragment<TM, LANES_M>(as + kk * A_STRIDE + a_col, a[buf]);
    read_fragment<TN, LANES_N>(as + BK * A_STRIDE + kk * B_STRIDE + b_col, b[buf]);
  };

  // Slices 0..STAGES-2 are in flight first (sm_80+; sm_75 stages slice 0 through registers).
  // Step t refills, at kk 0, the stage step t-1 read (the barrier closing step t-1 proves
  // everyone is done with it): cp.async on sm_80+, a global read into registers on sm_75,
  // stored at the last kk. At the last kk the barrier (after the wait for slice t+1) comes
  // before the next slice's row 0 is read, so one barrier per slice and no exposed latency.
  // Every step commits a group, empty or not, so wait_group counts slices.
#if __CUDA_ARCH__ >= 800
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s == 0 && k_tiles > 0) issue_predicated(0, smem_bytes0);
    if (s > 0 && s < k_tiles) issue_slice(s, s * STAGE_FLOATS);
    tgemm::cp_async_commit_unordered();
  }
  tgemm::cp_async_wait_unordered<STAGES - 2>();
#else
  if (k_tiles > 0) {
    load_slice(0);
    store_slice(0);
  }
#endif
  __syncthreads();
  // Floats from smem to the stage read and the stage refilled, rotated once per slice.
  int read_stage = 0, write_stage = (STAGES - 1) * STAGE_FLOATS;
  read_fragments(read_stage, 0, 0);
  for (int t = 0; t < k_tiles; ++t) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk == 0) {
#if __CUDA_ARCH__ >= 800
        if (t + STAGES - 1 < k_tiles) issue_slice(t + STAGES - 1, write_stage);
        tgemm::cp_async_commit_unordered();
#else
        if (t + 1 < k_tiles) load_slice(t + 1);
#endif
      }
      if (kk == BK - 1) {
#if __CUDA_ARCH__ >= 800
        tgemm::cp_async_wait_unordered<STAGES - 2>();
#else
        if (t + 1 < k_tiles) store_slice(write_stage);
#endif
        __syncthreads();
        read_stage = read_stage == (STAGES - 1) * STAGE_FLOATS ? 0 : read_stage + STAGE_FLOATS;
        write_stage = write_stage == (STAGES - 1) * STAGE_FLOATS ? 0 : write_stage + STAGE_FLOATS;
      }
      read_fragments(read_stage, (kk + 1) % BK, (kk + 1) % 2);
      // Serpentine order: each row starts with the column the last one ended on, so an
      // operand of consecutive FFMAs repeats (the register reuse cache).
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
          const int j = i % 2 ? TN - 1 - jj : jj;
          acc[i][j] = fmaf(a[kk % 2][i], b[kk % 2][j], acc[i][j]);
        }
    }
  }
#if __CUDA_ARCH__ >= 800
  tgemm::cp_async_wait_unordered<0>();
#endif
#if TAIL_SPLIT > 1
  if (work.slices > 1 && !tail_handover(p, work, acc)) return;
#endif

  // Epilogue: accumulator row cm*4+i is C row m0 + a_col + cm*LANES_M*4 + i, and column
  // chunk cn is C columns n0 + b_col + cn*LANES_N*4 ..+3.
  float* const c_ptr = static_cast<float*>(tgemm::batch_c<SPLIT_K>(p).c);
#pragma unroll
  for (int cm = 0; cm < TM / 4; ++cm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = m0 + a_col + cm * LANES_M * 4 + i;
      if (row >= p.m) continue;
      [[maybe_unused]] float* const c_row = c_ptr + (long long)row * p.ldc;  // plain builds
#pragma unroll
      for (int cn = 0; cn < TN / 4; ++cn) {
        const int col = n0 + b_col + cn * LANES_N * 4;
        const float* const r = &acc[cm * 4 + i][cn * 4];
#if TGEMM_EPILOGUE  // a stream tail's last slice to arrive holds the tile's whole sums here
        tgemm::store_output_pair(p, epilogue, row, col, r[0], r[1]);
        tgemm::store_output_pair(p, epilogue, row, col + 2, r[2], r[3]);
#else
        store_chunk(p, c_row, col, r);
#endif
      }
    }
}
