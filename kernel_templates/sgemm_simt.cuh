// sgemm_simt: FP32 GEMM on the CUDA cores (FFMA), row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
// One block computes a BM x BN tile of C, stepping through K in BK-deep slices that are
// staged in shared memory; each thread accumulates TM x TN results in registers.
// Every tunable below is a macro with a default; the search space
// (configs/spaces/sgemm_simt.yaml) repeats each static_assert with a readable reason.

#include "common/batch.cuh"
#include "common/elements.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_params.h"
#include "common/split_k.cuh"
#include "common/tile_swizzle.cuh"

// ---- Tunables ---------------------------------------------------------------------
#ifndef BM
#define BM 128  // rows of C per block
#endif
#ifndef BN
#define BN 128  // columns of C per block
#endif
#ifndef BK
#define BK 8  // depth of the K slice held in shared memory
#endif
#ifndef TM
#define TM 8  // rows of C per thread (register tile)
#endif
#ifndef TN
#define TN 8  // columns of C per thread (register tile)
#endif
#ifndef WARP_N
#define WARP_N 8  // threads of one warp side by side along N (32 / WARP_N along M)
#endif
#ifndef VEC
#define VEC 4  // elements per global load (1, 2, 4); needs that alignment of A and B
#endif
#ifndef PAD_A
#define PAD_A 4  // floats of padding per shared-memory row of A (bank conflicts)
#endif
#ifndef PAD_B
#define PAD_B 4  // floats of padding per shared-memory row of B
#endif
#ifndef STAGES
#define STAGES 2  // 1: single buffer; 2: double buffer (next slice loads while this computes)
#endif
#ifndef SPLIT_K
#define SPLIT_K 1  // K is cut into SPLIT_K slices, one per gridDim.z, summed atomically into C
#endif
#ifndef SPLIT_MODE
#define SPLIT_MODE \
  0  // split-K sums: 0 atomics into C; 1 workspace + sgemm_simt_reduce (repeatable)
#endif
#ifndef SWIZZLE
#define SWIZZLE 1  // blocks launched in groups of SWIZZLE tile rows, for L2 reuse of B
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS \
  1  // blocks per SM the registers must allow (__launch_bounds__): 2 caps
     // a 256-thread block at 128 registers, where one more halves occupancy
#endif
// ---- Derived constants --------------------------------------------------------------
#define THREADS_M (BM / TM)  // threads along M in a block
#define THREADS_N (BN / TN)  // threads along N in a block
#define THREADS (THREADS_M * THREADS_N)
#define WARP_M (32 / WARP_N)
// A thread's TM x TN results come in SUB_M x SUB_N chunks spread THREADS_M*SUB_M rows
// (THREADS_N*SUB_N columns) apart, so that neighbouring threads read neighbouring
// 16-byte words of shared memory: conflict-free float4 reads.
#define SUB_M (TM < 4 ? TM : 4)
#define SUB_N (TN < 4 ? TN : 4)
#define LDS_A (BM + PAD_A)  // shared-memory row stride of A, stored k-major: As[k][m]
#define LDS_B (BN + PAD_B)  // shared-memory row stride of B, stored k-major: Bs[k][n]

static_assert(TGEMM_TYPE_A == 0 && TGEMM_TYPE_B == 0 && TGEMM_TYPE_C == 0 && TGEMM_COMPUTE == 0,
              "sgemm_simt computes f32 inputs and outputs with FFMA");
static_assert(BM % TM == 0, "BM must be a multiple of TM");
static_assert(BN % TN == 0, "BN must be a multiple of TN");
static_assert(TM % SUB_M == 0 && TN % SUB_N == 0, "TM and TN must be 1, 2 or multiples of 4");
static_assert(THREADS % 32 == 0, "the block must be whole warps");
static_assert(THREADS <= 1024, "at most 1024 threads per block");
static_assert(32 % WARP_N == 0, "WARP_N must divide 32");
static_assert(THREADS_N % WARP_N == 0, "BN/TN must be a multiple of WARP_N");
static_assert(THREADS_M % WARP_M == 0, "BM/TM must be a multiple of 32/WARP_N");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(BK % VEC == 0 && BM % VEC == 0 && BN % VEC == 0,
              "BM, BN and BK must be multiples of VEC");
static_assert((BM * BK) % (THREADS * VEC) == 0, "the A tile must split evenly over the threads");
static_assert((BN * BK) % (THREADS * VEC) == 0, "the B tile must split evenly over the threads");
static_assert(STAGES == 1 || STAGES == 2, "STAGES must be 1 or 2");
static_assert(SPLIT_K >= 1, "SPLIT_K must be at least 1");
static_assert(SPLIT_MODE == 0 || SPLIT_MODE == 1, "SPLIT_MODE must be 0 or 1");
static_assert(SPLIT_K == 1 || SPLIT_MODE == 1 || !TGEMM_EPILOGUE,
              "atomic split-K has no last slice to apply an epilogue: SPLIT_MODE must be 1");
static_assert(SWIZZLE >= 1, "SWIZZLE must be at least 1");
static_assert(MIN_BLOCKS >= 1, "MIN_BLOCKS must be at least 1");

namespace tgemm_simt {

// Moves one operand's BK-deep slice from global memory to shared memory through
// registers, VEC elements per load. OUTER x INNER is the slice as stored in global
// memory (INNER contiguous); INNER_IS_K says the slice is stored transposed with
// respect to the k-major shared layout, so the shared-memory store scatters.
template <int OUTER, int INNER, bool INNER_IS_K, int LDS>
struct TileLoader {
  static constexpr int VECS_PER_ROW = INNER / VEC;
  static constexpr int LOADS = OUTER * INNER / (THREADS * VEC);
  float reg[LOADS][VEC];

  // Reads the slice whose first element is (outer0, inner0); elements past
  // (outer_max, inner_max) read as zero so partial tiles add nothing.
  __device__ __forceinline__ void load(const float* __restrict__ g, long long ld, int outer0,
                                       int inner0, int outer_max, int inner_max) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const int v = threadIdx.x + l * THREADS;
      const int o = outer0 + v / VECS_PER_ROW;
      const int i = inner0 + (v % VECS_PER_ROW) * VEC;
      const float* src = g + (long long)o * ld + i;
      if (o < outer_max && i + VEC <= inner_max) {
        if (VEC == 4) {
          const float4 x = *reinterpret_cast<const float4*>(src);
          reg[l][0] = x.x;
          reg[l][VEC > 1 ? 1 : 0] = x.y;
          reg[l][VEC > 2 ? 2 : 0] = x.z;
          reg[l][VEC > 3 ? 3 : 0] = x.w;
        } else if (VEC == 2) {
          const float2 x = *reinterpret_cast<const float2*>(src);
          reg[l][0] = x.x;
          reg[l][VEC > 1 ? 1 : 0] = x.y;
        } else {
          reg[l][0] = *src;
        }
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e)
          reg[l][e] = (o < outer_max && i + e < inner_max) ? src[e] : 0.0f;
      }
    }
  }

  __device__ __forceinline__ void store(float* s) const {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const int v = threadIdx.x + l * THREADS;
      const int o = v / VECS_PER_ROW;
      const int i = (v % VECS_PER_ROW) * VEC;
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        if (INNER_IS_K)
          s[(i + e) * LDS + o] = reg[l][e];
        else
          s[o * LDS + i + e] = reg[l][e];
      }
    }
  }
};

// Reads COUNT floats of one shared-memory row at `p` as float4 where alignment allows.
template <int COUNT, bool ALIGNED4>
__device__ __forceinline__ void read_fragment(const float* p, float* out) {
  if (COUNT == 4 && ALIGNED4) {
    const float4 x = *reinterpret_cast<const float4*>(p);
    out[0] = x.x;
    out[COUNT > 1 ? 1 : 0] = x.y;
    out[COUNT > 2 ? 2 : 0] = x.z;
    out[COUNT > 3 ? 3 : 0] = x.w;
  } else {
#pragma unroll
    for (int e = 0; e < COUNT; ++e) out[e] = p[e];
  }
}

}  // namespace tgemm_simt

// C = beta * C (zero when beta == 0): run before a split-K launch, whose slices add into C.
extern "C" __global__ void sgemm_simt_prepare_c(const tgemm::GemmParams p) {
  tgemm::scale_c_by_beta<float>(p);
}

#if SPLIT_MODE == 1
// C = alpha * (the SPLIT_K partials in slice order) + beta * C, after the main launch.
extern "C" __global__ void sgemm_simt_reduce(const tgemm::GemmParams p TGEMM_EPILOGUE_PARAMETER) {
#if TGEMM_EPILOGUE
  tgemm::split_k_reduce_output(p, epilogue, SPLIT_K);
#else
  tgemm::split_k_reduce<float>(p, SPLIT_K);
#endif
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    sgemm_simt(const tgemm::GemmParams batched TGEMM_EPILOGUE_PARAMETER) {
  using namespace tgemm_simt;
  const tgemm::GemmParams p = tgemm::batch_operands<SPLIT_K>(batched);  // this block's A, B
  extern __shared__ float4 smem_raw[];  // float4: 16-byte alignment for vector reads
  float* const smem = reinterpret_cast<float*>(smem_raw);
  float* const as_base = smem;                        // STAGES x [BK][LDS_A]
  float* const bs_base = smem + STAGES * BK * LDS_A;  // STAGES x [BK][LDS_B]

  const float* const a_ptr = static_cast<const float*>(p.a);
  const float* const b_ptr = static_cast<const float*>(p.b);
  // Block tile (tile_m, tile_n), with SWIZZLE tile rows launched together.
  int tile_m, tile_n;
  tgemm::swizzled_tile(SWIZZLE, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;

  // This split-K slice covers k in [k_begin, k_end), whole BK slices apart from the last.
  const tgemm::KSlice ks = tgemm::k_slice(p.k, BK, SPLIT_K, tgemm::split_k_slice<SPLIT_K>());
  const int k_begin = ks.begin, k_end = ks.end, k_tiles = ks.tiles;

  // Thread (ty, tx) in the THREADS_M x THREADS_N grid; a warp covers WARP_M x WARP_N of it.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int ty = (warp / (THREADS_N / WARP_N)) * WARP_M + lane / WARP_N;
  const int tx = (warp % (THREADS_N / WARP_N)) * WARP_N + lane % WARP_N;

  // A slice: N layout is BM rows of BK (k contiguous); T layout is BK rows of BM.
  TileLoader<TGEMM_OP_A ? BK : BM, TGEMM_OP_A ? BM : BK, !TGEMM_OP_A, LDS_A> load_a;
  // B slice: N layout is BK rows of BN (n contiguous); T layout is BN rows of BK.
  TileLoader<TGEMM_OP_B ? BN : BK, TGEMM_OP_B ? BK : BN, TGEMM_OP_B, LDS_B> load_b;
  auto load_slice = [&](int k0) {
    if (TGEMM_OP_A)
      load_a.load(a_ptr, p.lda, k0, m0, k_end, p.m);
    else
      load_a.load(a_ptr, p.lda, m0, k0, p.m, k_end);
    if (TGEMM_OP_B)
      load_b.load(b_ptr, p.ldb, n0, k0, p.n, k_end);
    else
      load_b.load(b_ptr, p.ldb, k0, n0, k_end, p.n);
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  constexpr bool kReadA4 = SUB_M == 4 && LDS_A % 4 == 0;
  constexpr bool kReadB4 = SUB_N == 4 && LDS_B % 4 == 0 && (STAGES * BK * LDS_A) % 4 == 0;
  auto compute_slice = [&](const float* as, const float* bs) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int c = 0; c < TM / SUB_M; ++c)
        read_fragment<SUB_M, kReadA4>(as + kk * LDS_A + c * THREADS_M * SUB_M + ty * SUB_M,
                                      a + c * SUB_M);
#pragma unroll
      for (int c = 0; c < TN / SUB_N; ++c)
        read_fragment<SUB_N, kReadB4>(bs + kk * LDS_B + c * THREADS_N * SUB_N + tx * SUB_N,
                                      b + c * SUB_N);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  };

  if (STAGES == 2) {
    if (k_tiles > 0) {
      load_slice(k_begin);
      load_a.store(as_base);
      load_b.store(bs_base);
      __syncthreads();
    }
    for (int t = 0; t < k_tiles; ++t) {
      const int cur = t & 1;
      const bool has_next = t + 1 < k_tiles;
      if (has_next) load_slice(k_begin + (t + 1) * BK);  // in flight during the FFMAs
      compute_slice(as_base + cur * BK * LDS_A, bs_base + cur * BK * LDS_B);
      if (has_next) {
        // The other buffer was last read in iteration t-1, which the barrier below closed.
        load_a.store(as_base + (cur ^ 1) * BK * LDS_A);
        load_b.store(bs_base + (cur ^ 1) * BK * LDS_B);
      }
      __syncthreads();
    }
  } else {
    for (int t = 0; t < k_tiles; ++t) {
      load_slice(k_begin + t * BK);
      __syncthreads();  // every thread has finished reading the previous slice
      load_a.store(as_base);
      load_b.store(bs_base);
      __syncthreads();
      compute_slice(as_base, bs_base);
    }
  }

  // Epilogue: row (c, i) of the thread tile is C row m0 + c*THREADS_M*SUB_M + ty*SUB_M + i.
  float* const c_ptr = static_cast<float*>(tgemm::batch_c<SPLIT_K>(p).c);
#pragma unroll
  for (int cm = 0; cm < TM / SUB_M; ++cm)
#pragma unroll
    for (int i = 0; i < SUB_M; ++i) {
      const int row = m0 + cm * THREADS_M * SUB_M + ty * SUB_M + i;
      if (row >= p.m) continue;
      float* const c_row = c_ptr + (long long)row * p.ldc;
#pragma unroll
      for (int cn = 0; cn < TN / SUB_N; ++cn) {
        const int col = n0 + cn * THREADS_N * SUB_N + tx * SUB_N;
        const float* r = &acc[cm * SUB_M + i][cn * SUB_N];
        if constexpr (SPLIT_K > 1 && SPLIT_MODE == 1) {  // constexpr: see split_k.cuh
#pragma unroll
          for (int j = 0; j < SUB_N; ++j)
            if (col + j < p.n)
              tgemm::split_k_store_partial(p, tgemm::split_k_slice<SPLIT_K>(), row, col + j, r[j]);
        } else if constexpr (TGEMM_EPILOGUE) {
#if TGEMM_EPILOGUE
#pragma unroll
          for (int j = 0; j < SUB_N; j += 2)  // pairs of columns where SUB_N is even
            if (SUB_N % 2 == 0)
              tgemm::store_output_pair(p, epilogue, row, col + j, r[j], r[SUB_N > 1 ? j + 1 : 0]);
            else
              tgemm::store_output(p, epilogue, row, col + j, r[j]);
#endif
        } else if (SPLIT_K > 1) {
#pragma unroll
          for (int j = 0; j < SUB_N; ++j)
            if (col + j < p.n) atomicAdd(c_row + col + j, p.alpha * r[j]);
        } else if (SUB_N == 4 && p.c_aligned16 && col + 4 <= p.n) {
          float4 out = make_float4(p.alpha * r[0], p.alpha * r[SUB_N > 1 ? 1 : 0],
                                   p.alpha * r[SUB_N > 2 ? 2 : 0], p.alpha * r[SUB_N > 3 ? 3 : 0]);
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
          for (int j = 0; j < SUB_N; ++j) {
            if (col + j >= p.n) continue;
            const float old = p.beta != 0.0f ? p.beta * c_row[col + j] : 0.0f;
            c_row[col + j] = p.alpha * r[j] + old;
          }
        }
      }
    }
}
