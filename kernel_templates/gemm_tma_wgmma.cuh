// gemm_tma_wgmma: GEMM on Hopper's warpgroup tensor cores (wgmma, sm_90a) fed by the bulk
// tensor copy engine (TMA), warp-specialized and persistent. f32 accumulation, row-major storage:
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
// Inputs f16 / bf16 (C in the input type or f32, either operand K- or MN-major), f32 computed
// as tf32, or FP8 (A and B each e4m3 or e5m2, C bf16, f16 or f32, the product scaled by the
// per-tensor scales of EpilogueParams, or in a TGEMM_ROWWISE_SCALES build by its scale_a's m
// values, one per row of C, and scale_b's n, one per column: cuBLASLt's outer-vector scales);
// tf32 and FP8 read both operands K-major (A stored [m][k], B stored [n][k]), in any layout: an
// operand stored MN-major is copied K-major into the workspace first (gemm_tma_wgmma_pack).
// A block is one producer warpgroup and CONSUMERS consumer warpgroups. One thread of the
// producer walks the block's work and issues tensor copies of A's and B's K slices (one
// 128-byte swizzle row deep: BK = 64 16-bit or 32 f32 elements) into a STAGES-deep ring of
// shared tiles; each slot has a "full" barrier (the copies' bytes) and an "empty" one (the
// consumer warps that read it). The consumers wait on full, issue wgmmas on the slot, and
// release it once the next slice's wgmmas are issued and the slot's have retired. The grid is
// persistent: each block takes work units blockIdx.x, + gridDim.x, ... (a unit is one output
// tile, or one K slice range of a tile with SPLIT_K > 1), so the producer fills the ring for the
// next unit while the consumers store the last one's tile (the epilogue overlaps the loads).
// The consumers split the tile's BM rows (cooperative). Tiles are walked in groups of SWIZZLE
// tile rows, so blocks running at once share B's columns in L2. A cluster is CLUSTER x
// CLUSTER_N neighbouring tiles: the CLUSTER blocks of one tile column share B's tile, each
// copying its share into all of their slots (multicast), and the CLUSTER_N blocks of one tile
// row share A's the same way, which divides that operand's traffic from L2. Edges: the copies
// fill zeros past the matrix, the epilogue stores only inside it: any M, N, K. The tensor maps
// need A and B (pointers and leading dimensions) aligned to 16 bytes; the host refuses other
// problems. With TMA_STORE, a tile with beta 0 leaves through shared memory by tensor stores
// where C allows them (TmaGemmParams::c_by_copy), so the consumers go on to the next tile's
// wgmmas while C drains; otherwise (and always without it) each thread stores its accumulators
// to C directly.
// SPLIT_K > 1 writes each slice range's raw f32 sums to the workspace and a second launch
// (gemm_tma_wgmma_reduce, common/split_k.cuh) sums them in order with alpha and beta: any C type.
// The space (configs/spaces/gemm_tma_wgmma.yaml) repeats each type-independent static_assert.

#include "common/c_pair.cuh"
#include "common/cluster.cuh"
#include "common/elements.cuh"
#include "common/epilogue.cuh"
#include "common/grid_dependency.cuh"
#include "common/mbarrier.cuh"
#include "common/split_k.cuh"
#include "common/tensor_store.cuh"
#include "common/tma_params.h"
#include "common/wgmma.cuh"
#if TGEMM_FP8 || TGEMM_TYPE_A == 0
#include "common/pack_layout.h"     // where gemm_tma_wgmma_pack puts MN-major operands
#include "common/pack_operand.cuh"  // the transposing copy of 4-byte elements
#endif

// ---- Tunables ---------------------------------------------------------------------
#ifndef BM
#define BM 128  // rows of C per tile: CONSUMERS warpgroups of BM / CONSUMERS rows (m64 multiples)
#endif
#ifndef BN
#define BN 256  // columns of C per tile: the N of every wgmma (64, 128, 192 or 256)
#endif
#ifndef CONSUMERS
#define CONSUMERS 2  // consumer warpgroups (128 threads each) sharing one tile's rows
#endif
#ifndef STAGES
#define STAGES 4  // slots of the shared ring: K slices copied ahead of the wgmmas
#endif
#ifndef SWIZZLE
#define SWIZZLE 8  // tile rows walked together (L2 reuse of B's columns)
#endif
#ifndef SPLIT_K
#define SPLIT_K 1  // K ranges per tile, each a work unit; partial sums reduced by a second launch
#endif
#ifndef CLUSTER
#define CLUSTER 1  // cluster blocks on neighbouring tile rows: each copies 1/CLUSTER of B for all
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1  // cluster blocks on neighbouring tile columns: each copies 1/CLUSTER_N of A
#endif
#ifndef TMA_STORE
#define TMA_STORE 0  // 1: C through shared memory by tensor stores where it can (beta 0, aligned)
#endif
#ifndef TGEMM_ROWWISE_SCALES
#define TGEMM_ROWWISE_SCALES 0  // FP8's scales per row of A and column of B (Epilogue's build)
#endif

// ---- Derived constants --------------------------------------------------------------
#define ELEM_BYTES (TGEMM_TYPE_A == 0 ? 4 : TGEMM_FP8 ? 1 : 2)  // bytes of one A or B element
#define ROW_BYTES 128                    // one swizzled shared row (the swizzle span)
#define BK (ROW_BYTES / ELEM_BYTES)      // K depth of a slice: 64 16-bit, 32 tf32, 128 FP8
#define WK (32 / ELEM_BYTES)             // K of one wgmma (32 bytes of it): k16, k8 tf32, k32 FP8
#define THREADS ((CONSUMERS + 1) * 128)  // the producer warpgroup, then the consumers
#define WG_ROWS (BM / CONSUMERS)         // rows of C per consumer warpgroup
#define MT (WG_ROWS / 64)                // m64 wgmma tiles per consumer warpgroup
#define STORED_K_MAJOR_A (TGEMM_OP_A == 0)  // A stored [m][k]
#define STORED_K_MAJOR_B (TGEMM_OP_B == 1)  // B stored [n][k]
// How the main loop reads A and B: as stored, but FP8 and tf32 always K-major (their wgmmas
// read nothing else), an operand stored MN-major being packed K-major first
// (gemm_tma_wgmma_pack).
#define READS_K_MAJOR_ONLY (TGEMM_FP8 || TGEMM_TYPE_A == 0)
#define K_MAJOR_A (STORED_K_MAJOR_A || READS_K_MAJOR_ONLY)
#define K_MAJOR_B (STORED_K_MAJOR_B || READS_K_MAJOR_ONLY)
#define A_TILE_BYTES (BM * ROW_BYTES)
#define B_TILE_BYTES (BN * ROW_BYTES)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)  // what one slot's copies deliver
#define C_BYTES (TGEMM_TYPE_C == 0 ? 4 : 2)
// C leaves in chunks of 64 rows by one 128-byte swizzle row of columns, two per consumer
// warpgroup (one filled while the other's store reads it), after the ring.
#define CHUNK_BYTES (64 * ROW_BYTES)
#define STAGING_BYTES (TMA_STORE * CONSUMERS * 2 * CHUNK_BYTES)
// Registers per thread after the split (setmaxnreg): the producer keeps few, the consumers
// take the rest of the SM's 64 K (their f32 accumulators); one consumer needs no split.
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
// FP8 slices' sums promoted while the next slice's wgmmas run (see consume): two consumers,
// whose three sets of accumulators fit their registers.
#define PIPELINED_PROMOTION (TGEMM_FP8 && CONSUMERS > 1 && MT * BN / 2 <= 64)
#define CLUSTER_SIZE (CLUSTER * CLUSTER_N)  // rank = row + CLUSTER * column of the cluster's tiles
// A slot is written by the blocks that share this block's A (its cluster row) or B (its
// column), itself included, and each of their consumer warps releases it once: the empty
// barrier's arrival count.
#define CONSUMER_WARPS (CONSUMERS * 4)
#define RELEASES (CONSUMER_WARPS * (CLUSTER + CLUSTER_N - 1))

static_assert(TGEMM_TYPE_A == TGEMM_TYPE_B || (TGEMM_FP8 && TGEMM_TYPE_B >= 3),
              "A and B must share one element type, or both be FP8");
static_assert(TGEMM_TYPE_A != 0 || TGEMM_COMPUTE == 1, "f32 inputs are computed as tf32 here");
static_assert(TGEMM_TYPE_A == 0 || TGEMM_COMPUTE == 0,
              "16-bit and FP8 inputs accumulate in f32 (compute type f32)");
static_assert(TGEMM_FP8 ? TGEMM_TYPE_C <= 2 : (TGEMM_TYPE_C == TGEMM_TYPE_A || TGEMM_TYPE_C == 0),
              "C must be the input type or f32 (FP8: bf16, f16 or f32)");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "one or two consumer warpgroups");
static_assert(BM % (64 * CONSUMERS) == 0, "each consumer's rows must be whole m64 tiles");
static_assert(BM <= 256, "a tensor copy's box is at most 256 rows");
static_assert(BN == 64 || BN == 128 || BN == 192 || BN == 256, "BN is the wgmma N");
static_assert(MT * BN / 2 <= 128, "more than 128 accumulators per thread spill");
static_assert(!TGEMM_FP8 || MT * BN / 2 <= 96,
              "FP8 keeps two sets of accumulators (the slice's and the f32 sums): 96 at most");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES must be 2..8");
static_assert(!TGEMM_ROWWISE_SCALES || TGEMM_FP8, "rowwise scales scale FP8 inputs");
static_assert(SWIZZLE >= 1, "SWIZZLE must be at least 1");
static_assert(SPLIT_K >= 1, "SPLIT_K must be at least 1");
static_assert(CLUSTER == 1 || CLUSTER == 2, "one or two cluster blocks along M");
static_assert(CLUSTER_N == 1 || CLUSTER_N == 2, "one or two cluster blocks along N");
static_assert(TMA_STORE == 0 || TMA_STORE == 1, "TMA_STORE is 0 or 1");
static_assert(TMA_STORE == 0 || !TGEMM_EPILOGUE,
              "tensor stores write alpha * acc to C: an epilogue's build stores D directly");
static_assert(CONSUMERS * CONSUMER_REGS * 128 + PRODUCER_REGS * 128 <= 65536,
              "the register split must fit the SM's 64 K registers");
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
static_assert(__CUDA_ARCH__ < 0, "gemm_tma_wgmma needs sm_90a (wgmma, setmaxnreg): Hopper only");
#endif

namespace tgemm_tma_wgmma {

// The work of one unit: its output tile and its run of K slices.
struct Unit {
  int m0, n0;  // the tile's first row and column of C
  int slice;   // which of the SPLIT_K ranges
  int kt0,
      k_tiles;  // its first K slice and how many (at least one unless split: K = 0 reads zeros)
};

// The units a cluster walks: its CLUSTER x CLUSTER_N block of neighbouring tiles (one tile per
// block) at every position, times the split ranges.
__device__ __forceinline__ int cluster_units(int grid_m, int grid_n) {
  return (grid_m + CLUSTER - 1) / CLUSTER * ((grid_n + CLUSTER_N - 1) / CLUSTER_N) * SPLIT_K;
}

// Unit u of the cluster's walk, for the block of cluster rank `rank`: slice ranges of one tile
// are neighbours (they run at once), cluster positions in groups of SWIZZLE cluster rows,
// column-major inside a group. A block past the last tile row or column computes a tile wholly
// outside C (its copies read zeros, its stores are skipped) so that its peers still get their
// shares of A and B.
__device__ __forceinline__ Unit unit_at(int u, unsigned rank, int grid_m, int grid_n,
                                        int all_k_tiles) {
  Unit w;
  w.slice = u % SPLIT_K;
  const int t = u / SPLIT_K;
  const int rows = (grid_m + CLUSTER - 1) / CLUSTER;  // cluster rows of tiles
  const int cols = (grid_n + CLUSTER_N - 1) / CLUSTER_N;
  const int group_size = SWIZZLE * cols;
  const int first_row = (t / group_size) * SWIZZLE;
  const int rows_in_group = min(rows - first_row, SWIZZLE);
  const int row = first_row + (t % group_size) % rows_in_group;
  const int col = (t % group_size) / rows_in_group;
  w.m0 = (row * CLUSTER + int(rank) % CLUSTER) * BM;
  w.n0 = (col * CLUSTER_N + int(rank) / CLUSTER) * BN;
  const int per = (all_k_tiles + SPLIT_K - 1) / SPLIT_K;
  w.kt0 = w.slice * per;
  w.k_tiles = max(min(per, all_k_tiles - w.kt0), 0);
  if (SPLIT_K == 1) w.k_tiles = max(w.k_tiles, 1);
  return w;
}

// The cluster ranks that share this block's A tile (its cluster row) and B tile (its column),
// one bit each, itself included.
__device__ __forceinline__ unsigned short a_sharers(unsigned rank) {
  unsigned short bits = 0;
#pragma unroll
  for (int j = 0; j < CLUSTER_N; ++j) bits |= 1u << (rank % CLUSTER + CLUSTER * j);
  return bits;
}
__device__ __forceinline__ unsigned short b_sharers(unsigned rank) {
  return ((1u << CLUSTER) - 1) << (rank / CLUSTER * CLUSTER);
}

// One box of a slice into `dst`, completing `full`; with SHARERS > 1 into the slots of every
// block in `blocks` (each block's full barrier then counts the whole tile).
template <int SHARERS>
__device__ __forceinline__ void copy_box(unsigned dst, const void* map, int inner, int outer,
                                         unsigned full, unsigned short blocks) {
  if constexpr (SHARERS == 1)
    tgemm::tensor_copy_2d(dst, map, inner, outer, full);
  else
    tgemm::tensor_copy_2d_multicast(dst, map, inner, outer, full, blocks);
}

// Share `part` (of SHARERS) of one operand's tile of ROWS rows (of M or N, from `row0`) for the
// slice at K `k0`. K-major operands are boxes of 128 bytes of K by rows (ROWS / SHARERS per
// share); MN-major ones are boxes of 64 columns by BK rows of K, one per 64 columns (every
// SHARERS-th per share), laid side by side as the descriptors' leading offset expects.
template <int ROWS, int SHARERS, bool K_MAJOR>
__device__ __forceinline__ void copy_tile(unsigned dst, const void* map, int k0, int row0,
                                          unsigned part, unsigned short blocks, unsigned full) {
  if constexpr (K_MAJOR) {
    constexpr int kRows = ROWS / SHARERS;
    copy_box<SHARERS>(dst + part * kRows * ROW_BYTES, map, k0, row0 + int(part) * kRows, full,
                      blocks);
  } else {
#pragma unroll
    for (int j = 0; j < ROWS / 64; ++j)
      if (SHARERS == 1 || j % SHARERS == int(part))
        copy_box<SHARERS>(dst + j * BK * ROW_BYTES, map, row0 + 64 * j, k0, full, blocks);
  }
}

// The copies of slice kt into the slot at `slot`: this block's shares of A's and B's tiles.
__device__ __forceinline__ void copy_slice(const tgemm::TmaGemmParams& p, const Unit& w, int kt,
                                           unsigned rank, unsigned slot, unsigned full) {
  const int k0 = (w.kt0 + kt) * BK;
  copy_tile<BM, CLUSTER_N, K_MAJOR_A>(slot, &p.a, k0, w.m0, rank / CLUSTER, a_sharers(rank), full);
  copy_tile<BN, CLUSTER, K_MAJOR_B>(slot + A_TILE_BYTES, &p.b, k0, w.n0, rank % CLUSTER,
                                    b_sharers(rank), full);
}

// A's descriptor for m64 rows from `row` (a multiple of 64) and k-step s of a slot's tile.
__device__ __forceinline__ unsigned long long a_descriptor(unsigned tile, int row, int s) {
  return K_MAJOR_A ? tgemm::wgmma_descriptor(tile + row * ROW_BYTES + s * WK * ELEM_BYTES, 16)
                   : tgemm::wgmma_descriptor(
                         tile + (row / 64) * BK * ROW_BYTES + s * WK * ROW_BYTES, BK * ROW_BYTES);
}
__device__ __forceinline__ unsigned long long b_descriptor(unsigned tile, int s) {
  return K_MAJOR_B ? tgemm::wgmma_descriptor(tile + s * WK * ELEM_BYTES, 16)
                   : tgemm::wgmma_descriptor(tile + s * WK * ROW_BYTES, BK * ROW_BYTES);
}

// The ring position both roles walk in the same order: slot index and the phase parity of
// its current use.
struct RingPosition {
  int slot = 0;
  unsigned phase = 0;
  __device__ __forceinline__ void advance() {
    if (++slot == STAGES) {
      slot = 0;
      phase ^= 1u;
    }
  }
};

// The producer's loop (one thread): every unit's slices into the ring, a slot refilled once
// its consumers (and, in a cluster, its peers' consumers) released it.
__device__ __forceinline__ void produce(const tgemm::TmaGemmParams& p, unsigned ring, unsigned full,
                                        unsigned empty, unsigned rank, int grid_m, int grid_n,
                                        int all_k_tiles) {
  RingPosition at;
  const int units = cluster_units(grid_m, grid_n);
  for (int u = blockIdx.x / CLUSTER_SIZE; u < units; u += gridDim.x / CLUSTER_SIZE) {
    const Unit w = unit_at(u, rank, grid_m, grid_n, all_k_tiles);
    for (int kt = 0; kt < w.k_tiles; ++kt) {
      tgemm::mbarrier_wait(empty + 8 * at.slot, at.phase ^ 1u);
      tgemm::mbarrier_arrive_expect_bytes(full + 8 * at.slot, STAGE_BYTES);
      copy_slice(p, w, kt, rank, ring + at.slot * STAGE_BYTES, full + 8 * at.slot);
      at.advance();
    }
  }
}

// A rowwise build's scales (A's of row r, B's of columns col and col + 1) into a pair of sums,
// applied as the pair leaves so that no scale is held across the tile; nothing in other builds,
// whose per-tensor scales are in the sums already. Null pointers are scales of 1.
__device__ __forceinline__ void scale_pair(const tgemm::TmaGemmParams& p, int r, int col, float& v0,
                                           float& v1) {
#if TGEMM_ROWWISE_SCALES
  const tgemm::EpilogueParams& e = p.epilogue;
  if (e.scale_a && r < p.gemm.m) {
    const float s = __ldg(e.scale_a + r);
    v0 *= s;
    v1 *= s;
  }
  if (e.scale_b) {
    if (col < p.gemm.n) v0 *= __ldg(e.scale_b + col);
    if (col + 1 < p.gemm.n) v1 *= __ldg(e.scale_b + col + 1);
  }
#endif
}

// One consumer warpgroup's rows of a unit's tile, to C (or, split, to the workspace).
__device__ __forceinline__ void store_tile(const tgemm::TmaGemmParams& p, const Unit& w, int wg,
                                           float (&acc)[MT][BN / 2]) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int row = w.m0 + wg * WG_ROWS + mt * 64 + warp * 16 + g;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = w.n0 + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // rows g and g + 8
        float v0 = acc[mt][4 * j + 2 * h], v1 = acc[mt][4 * j + 2 * h + 1];
        const int r = row + 8 * h;
        scale_pair(p, r, col, v0, v1);
        if (SPLIT_K == 1) {
#if TGEMM_EPILOGUE
          tgemm::store_output_pair(p.gemm, p.epilogue, r, col, v0, v1);
#else
          store_c_pair(p.gemm, r, col, v0, v1);
#endif
        } else if (r < p.gemm.m && col < p.gemm.n) {
          tgemm::split_k_store_partial(p.gemm, w.slice, r, col, v0);
          if (col + 1 < p.gemm.n) tgemm::split_k_store_partial(p.gemm, w.slice, r, col + 1, v1);
        }
      }
    }
  }
}

// Two accumulators of one row, as C's elements, into shared memory at `at`.
__device__ __forceinline__ void stage_pair(float*, unsigned at, float v0, float v1) {
  tgemm::shared_store(at, v0, v1);
}
template <typename T>  // Half or BFloat16: one 32-bit word, the lower column first
__device__ __forceinline__ void stage_pair(T*, unsigned at, float v0, float v1) {
  tgemm::shared_store(
      at, unsigned(tgemm::from_f32<T>(v0).bits) | (unsigned(tgemm::from_f32<T>(v1).bits) << 16));
}

// One consumer warpgroup's rows of a unit's tile to C (alpha applied, beta 0) through its two
// staging chunks, one tensor store each, written 128-byte swizzled as C's map reads them: the
// 16-byte unit u of row r at u ^ (r % 8), which spreads a warp's stores over every bank.
// `stored` counts the warpgroup's chunks across units; its parity picks the buffer. Chunk q's
// buffer was last read by store q - 2, which the issuing thread awaited before chunk q - 1's
// barrier, so one barrier per chunk orders both the reuse and the store.
__device__ __forceinline__ void store_tile_by_copy(const tgemm::TmaGemmParams& p, const Unit& w,
                                                   int wg, float (&acc)[MT][BN / 2],
                                                   unsigned staging, unsigned& stored) {
  constexpr int kCols = ROW_BYTES / C_BYTES;  // columns of C per chunk
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const int g = lane / 4, t = lane % 4;
  const bool issuer = threadIdx.x % 128 == 0;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int c0 = 0; c0 < BN; c0 += kCols) {
      const unsigned chunk = staging + (stored % 2) * CHUNK_BYTES;
#pragma unroll
      for (int jj = 0; jj < kCols / 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // rows g and g + 8 of the warp's 16 (both = g mod 8)
          const int j = c0 / 8 + jj, row = warp * 16 + g + 8 * h;
          const int byte = (jj * 8 + 2 * t) * C_BYTES;  // in the row's 128 bytes
          float v0 = p.gemm.alpha * acc[mt][4 * j + 2 * h],
                v1 = p.gemm.alpha * acc[mt][4 * j + 2 * h + 1];
          scale_pair(p, w.m0 + wg * WG_ROWS + mt * 64 + row, w.n0 + j * 8 + 2 * t, v0, v1);
          stage_pair(static_cast<tgemm::ElementC*>(nullptr),
                     chunk + row * ROW_BYTES + ((byte / 16) ^ g) * 16 + byte % 16, v0, v1);
        }
      tgemm::fence_shared_for_copies();
      if (issuer) tgemm::tensor_stores_read();  // the other buffer's store has read it
      tgemm::named_barrier(1 + wg, 128);
      if (issuer) {
        tgemm::tensor_store_2d(&p.c, w.n0 + c0, w.m0 + wg * WG_ROWS + mt * 64, chunk);
        tgemm::tensor_store_commit();
      }
      ++stored;
    }
}

// One slice's wgmmas (this consumer warpgroup's rows of the tile at `tile` in the ring) into
// `acc`; `first`: the slice starts the sums (scale-d 0: acc's old values are ignored).
__device__ __forceinline__ void issue_slice(float (&acc)[MT][BN / 2], unsigned tile, int wg,
                                            bool first) {
#pragma unroll
  for (int s = 0; s < BK / WK; ++s)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
      tgemm::wgmma_m64<BN, !K_MAJOR_A, !K_MAJOR_B>(
          acc[mt], a_descriptor(tile, wg * WG_ROWS + mt * 64, s),
          b_descriptor(tile + A_TILE_BYTES, s), !first || s > 0);
}

// A consumer warpgroup's loop: for each unit, its slices' wgmmas on the ring, then its rows
// of the tile stored while the producer already fills the ring for the next unit.
__device__ __forceinline__ void consume(const tgemm::TmaGemmParams& p, unsigned ring, unsigned full,
                                        unsigned empty, unsigned rank, int grid_m, int grid_n,
                                        int all_k_tiles) {
  const int wg = threadIdx.x / 128 - 1;         // this thread's consumer warpgroup
  const bool releases = threadIdx.x % 32 == 0;  // one arrival per warp on a slot's empty barrier
  float acc[MT][BN / 2];
#if TGEMM_FP8
  // FP8's tensor cores add products keeping about 14 bits of each addend, so their sum drifts
  // as K grows: each slice's 128-deep sum is taken from them and added here in f32 (promotion,
  // cuBLASLt's default FP8 accuracy), which holds the error to one slice's. With two consumer
  // warpgroups (PIPELINED_PROMOTION) slices alternate between two sets (acc, acc_odd): one
  // slice's sum is added while the next one's wgmmas run, so the tensor cores do not wait for
  // the additions. One consumer, or a consumer's 64 x 192, has no registers for a third set
  // (ptxas would serialize its wgmmas): it adds each slice's sum once the slice's wgmmas have
  // retired, while the other consumer's wgmmas keep the tensor cores busy.
#if PIPELINED_PROMOTION
  float acc_odd[MT][BN / 2];
#endif
  float sums[MT][BN / 2];
  float(&result)[MT][BN / 2] = sums;
  // Slice `kt`'s sum, retired, into the f32 sums (the first one sets them).
  const auto promote = [&](const float(&slice)[MT][BN / 2], int kt) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i)
        sums[mt][i] = kt > 0 ? sums[mt][i] + slice[mt][i] : slice[mt][i];
  };
#else
  float(&result)[MT][BN / 2] = acc;
#endif
  RingPosition at;
  const unsigned staging = ring + STAGES * STAGE_BYTES + wg * 2 * CHUNK_BYTES;
  unsigned stored = 0;  // chunks of C this warpgroup sent by tensor stores
  // A slot is free once every block that copies into it is done with it.
  const unsigned short writers = a_sharers(rank) | b_sharers(rank);
  const auto release = [&](int slot) {
    if (!releases) return;
    if constexpr (CLUSTER_SIZE == 1) {
      tgemm::mbarrier_arrive(empty + 8 * slot);
    } else {
#pragma unroll
      for (unsigned r = 0; r < CLUSTER_SIZE; ++r)
        if (writers & (1u << r)) tgemm::mbarrier_arrive_in(empty + 8 * slot, r);
    }
  };
#if TGEMM_FP8 && !TGEMM_ROWWISE_SCALES
  // Every product carries both per-tensor scales (a null one is 1): applied to the sums before
  // they leave (a rowwise build's by scale_pair).
  const float scale = (p.epilogue.scale_a ? *p.epilogue.scale_a : 1.0f) *
                      (p.epilogue.scale_b ? *p.epilogue.scale_b : 1.0f);
#endif
  const int units = cluster_units(grid_m, grid_n);
  for (int u = blockIdx.x / CLUSTER_SIZE; u < units; u += gridDim.x / CLUSTER_SIZE) {
    const Unit w = unit_at(u, rank, grid_m, grid_n, all_k_tiles);
#if PIPELINED_PROMOTION
    int held = -1;  // the slot whose wgmmas may still run (released after the next slice's issue)
    // Slice kt's wgmmas into one set while slice kt - 1's sum, retired, is promoted from the
    // other.
    for (int kt = 0; kt < w.k_tiles; ++kt) {
      tgemm::mbarrier_wait(full + 8 * at.slot, at.phase);
      if (kt % 2 == 0) {
        tgemm::wgmma_fence();
        issue_slice(acc, ring + at.slot * STAGE_BYTES, wg, true);
      } else {
        tgemm::wgmma_fence();
        issue_slice(acc_odd, ring + at.slot * STAGE_BYTES, wg, true);
      }
      tgemm::wgmma_commit();
      tgemm::wgmma_wait<1>();  // slice kt - 1's wgmmas have retired: its slot is free
      if (held >= 0) {
        release(held);
        if (kt % 2 == 0)
          promote(acc_odd, kt - 1);
        else
          promote(acc, kt - 1);
      }
      held = at.slot;
      at.advance();
    }
    tgemm::wgmma_wait<0>();
    if (held >= 0) {
      release(held);
      if (w.k_tiles % 2 == 1)
        promote(acc, w.k_tiles - 1);
      else
        promote(acc_odd, w.k_tiles - 1);
    }
#elif TGEMM_FP8
    for (int kt = 0; kt < w.k_tiles; ++kt) {
      tgemm::mbarrier_wait(full + 8 * at.slot, at.phase);
      tgemm::wgmma_fence();
      issue_slice(acc, ring + at.slot * STAGE_BYTES, wg, true);
      tgemm::wgmma_commit();
      tgemm::wgmma_wait<0>();  // the slice's sum is in acc, and its slot is read
      release(at.slot);
      promote(acc, kt);
      at.advance();
    }
#else
    int held = -1;  // the slot whose wgmmas may still run (released after the next slice's issue)
    for (int kt = 0; kt < w.k_tiles; ++kt) {
      tgemm::mbarrier_wait(full + 8 * at.slot, at.phase);
      tgemm::wgmma_fence();
      issue_slice(acc, ring + at.slot * STAGE_BYTES, wg, kt == 0);
      tgemm::wgmma_commit();
      tgemm::wgmma_wait<1>();  // the previous slice's wgmmas have retired: its slot is free
      if (held >= 0) release(held);
      held = at.slot;
      at.advance();
    }
    tgemm::wgmma_wait<0>();
    if (held >= 0) release(held);
#endif
    if (w.k_tiles == 0) {  // a split range past K's end: its partial sums are zero
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) result[mt][i] = 0.0f;
    }
#if TGEMM_FP8 && !TGEMM_ROWWISE_SCALES
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) result[mt][i] *= scale;
#endif
    if (TMA_STORE && SPLIT_K == 1 && p.gemm.beta == 0.0f && p.c_by_copy)
      store_tile_by_copy(p, w, wg, result, staging, stored);
    else
      store_tile(p, w, wg, result);
  }
  if (TMA_STORE && threadIdx.x % 128 == 0) tgemm::tensor_stores_done();
}

}  // namespace tgemm_tma_wgmma

extern "C" __global__ void __launch_bounds__(THREADS, 1) __cluster_dims__(CLUSTER_SIZE, 1, 1)
    gemm_tma_wgmma(const __grid_constant__ tgemm::TmaGemmParams p) {
  using namespace tgemm_tma_wgmma;
  extern __shared__ char smem_raw[];
  __shared__ __align__(8) unsigned long long barriers[2 * STAGES];  // full slots, then empty
  // Slots start on 1024-byte boundaries (the swizzle pattern's period): the host adds 1 KiB.
  const unsigned ring = (tgemm::shared_address(smem_raw) + 1023u) & ~1023u;
  const unsigned full = tgemm::shared_address(barriers), empty = full + 8 * STAGES;

  const int grid_m = (p.gemm.m + BM - 1) / BM, grid_n = (p.gemm.n + BN - 1) / BN;
  const int all_k_tiles = (p.gemm.k + BK - 1) / BK;
  const unsigned rank = CLUSTER_SIZE == 1 ? 0u : tgemm::cluster_rank();

  if (threadIdx.x == 0) {
    tgemm::tensor_map_prefetch(&p.a);
    tgemm::tensor_map_prefetch(&p.b);
    for (int s = 0; s < STAGES; ++s) {
      tgemm::mbarrier_init(full + 8 * s, 1);
      tgemm::mbarrier_init(empty + 8 * s, RELEASES);
    }
    tgemm::mbarrier_init_fence();
  }
  // The cluster's barriers are initialised before any block copies into or arrives on them.
  if (CLUSTER_SIZE > 1)
    tgemm::cluster_sync();
  else
    __syncthreads();
  // Launched after another grid of the plan (early), C may still be in use by it.
  tgemm::wait_for_prior_grid();

  if (threadIdx.x < 128) {
#if CONSUMERS > 1
    tgemm::registers_decrease<PRODUCER_REGS>();
#endif
    if (threadIdx.x == 0) produce(p, ring, full, empty, rank, grid_m, grid_n, all_k_tiles);
    __syncwarp();
  } else {
#if CONSUMERS > 1
    tgemm::registers_increase<CONSUMER_REGS>();
#endif
    consume(p, ring, full, empty, rank, grid_m, grid_n, all_k_tiles);
  }
  tgemm::allow_next_grid();
  // No block leaves while a peer may still copy into its slots or arrive on its barriers.
  if (CLUSTER_SIZE > 1) tgemm::cluster_sync();
}

#if READS_K_MAJOR_ONLY
namespace tgemm_tma_wgmma {
struct KeepWord {  // tf32's pack copies f32 as it is: the wgmma reads tf32 of it, as unpacked
  __device__ unsigned operator()(unsigned w) const { return w; }
};
}  // namespace tgemm_tma_wgmma

// Operands stored MN-major ([k][rows]) copied K-major into the workspace before the main
// launch, whose tensor maps read them there (common/pack_layout.h: rows of K elements padded
// to 16 bytes, A at the start, B after it). blockIdx.z 0 packs A, 1 packs B, and the blocks of
// an operand stored K-major (or past its edge) return at once. tf32: tiles of 32 x 32
// elements, 32 x 8 threads (common/pack_operand.cuh). FP8: tiles of 64 x 64 bytes, 256
// threads, read and written along contiguous bytes; a whole tile of a 16-byte aligned operand
// moves 16 bytes per access (a byte-wise copy runs at a fraction of the memory's bandwidth),
// edge tiles and other alignments go byte by byte.
extern "C" __global__ void __launch_bounds__(256) gemm_tma_wgmma_pack(const tgemm::GemmParams p) {
  const bool is_b = blockIdx.z == 1;
  if (is_b ? STORED_K_MAJOR_B : STORED_K_MAJOR_A) return;
  const long long rows = is_b ? p.n : p.m, k = p.k, ld = is_b ? p.ldb : p.lda;
  const tgemm::PackedLayout a_packed =
      tgemm::packed_layout(p.m, p.k, 1, 16 / ELEM_BYTES, ELEM_BYTES);
  const tgemm::PackedLayout to =
      is_b ? tgemm::packed_layout(p.n, p.k, 1, 16 / ELEM_BYTES, ELEM_BYTES) : a_packed;
#if !TGEMM_FP8
  tgemm::pack_operand_transposed32(is_b ? p.b : p.a, ld, k, rows,
                                   static_cast<char*>(p.workspace) + (is_b ? a_packed.bytes : 0),
                                   to, tgemm_tma_wgmma::KeepWord{});
#else
  const long long k0 = blockIdx.x * 64ll, r0 = blockIdx.y * 64ll;
  if (k0 >= to.ld || r0 >= rows) return;
  const unsigned char* src = static_cast<const unsigned char*>(is_b ? p.b : p.a);
  unsigned char* dst = static_cast<unsigned char*>(p.workspace) + (is_b ? a_packed.bytes : 0);
  // Rows 16-byte multiples: the whole-tile copy reads [row][k] 16-byte pieces of it.
  __shared__ alignas(16) unsigned char tile[64][64 + 16];
  if (k0 + 64 <= k && r0 + 64 <= rows && ld % 16 == 0 &&
      reinterpret_cast<unsigned long long>(src) % 16 == 0) {
    // In: thread t reads 16 bytes of k row t / 4 and scatters them transposed ([row][k]);
    // out: it writes 16 bytes of packed row t / 4 (workspace rows are 16-byte multiples).
    const int kk = threadIdx.x / 4, r = threadIdx.x % 4 * 16;
    const uint4 v = *reinterpret_cast<const uint4*>(src + (k0 + kk) * ld + r0 + r);
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int b = 0; b < 16; ++b) tile[r + b][kk] = (unsigned char)(words[b / 4] >> (8 * (b % 4)));
    __syncthreads();
    const int row = threadIdx.x / 4, piece = threadIdx.x % 4 * 16;
    *reinterpret_cast<uint4*>(dst + (r0 + row) * to.ld + k0 + piece) =
        *reinterpret_cast<const uint4*>(&tile[row][piece]);
    return;
  }
  for (int i = threadIdx.x; i < 64 * 64; i += 256) {
    const int kk = i / 64, r = i % 64;
    tile[kk][r] = k0 + kk < k && r0 + r < rows ? src[(k0 + kk) * ld + r0 + r] : 0;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64 * 64; i += 256) {
    const int r = i / 64, kk = i % 64;
    if (r0 + r < rows && k0 + kk < to.ld) dst[(r0 + r) * to.ld + k0 + kk] = tile[kk][r];
  }
#endif
}
#endif

// C = alpha * (the SPLIT_K partial sums, in order) + beta * C, after the main launch (with an
// epilogue, D = its value of that: the activation once, on the whole sums).
extern "C" __global__ void gemm_tma_wgmma_reduce(
    const tgemm::GemmParams p TGEMM_EPILOGUE_PARAMETER) {
  tgemm::wait_for_prior_grid();
#if TGEMM_EPILOGUE
  tgemm::split_k_reduce_output(p, epilogue, SPLIT_K);
#else
  tgemm::split_k_reduce<tgemm::ElementC>(p, SPLIT_K);
#endif
}
