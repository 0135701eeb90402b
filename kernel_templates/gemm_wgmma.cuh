// gemm_wgmma: GEMM on Hopper's warpgroup tensor cores (wgmma.mma_async, sm_90a), f32
// accumulation, row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
// Inputs f16 / bf16 (m64nNk16, C in the input type or f32), or f32 computed as tf32 (m64nNk8).
// A block of WGS warpgroups computes a BM x BN tile of C; each warpgroup BM / WGS rows of it,
// as m64 x BN wgmma tiles with the accumulators in registers. K is walked in slices of one
// 128-byte swizzle row (BK = 64 16-bit or 32 f32 elements), staged in shared memory by a
// STAGES-deep cp.async pipeline that every thread feeds, in the 128-byte swizzled layout the
// matrix descriptors name (no TMA: its descriptors need the driver API). 16-bit operands are
// read in the caller's layout (K-major, or MN-major through the descriptors' transpose bits)
// with 16-byte copies that zero-fill past the matrix edges: any M, N, K, with A and B aligned
// to 16 bytes. PACK=1 serves 16-bit operands of any alignment: A and B are first copied into
// the workspace in the caller's layout (no transpose: the transpose bits read MN-major tiles,
// so the pack is a plain streaming copy), padded with zeros to whole tiles, and the main loop
// reads those with unpredicated 16-byte copies. tf32 needs K-major operands: with PACK=0, A and
// B are packed into the workspace as A [m][k] and B [n][k] rounded to tf32
// (common/pack_operand.cuh, entries gemm_wgmma_pack_a/_b). tf32 PACK=2 packs only an MN-major
// operand (its transpose) and reads a K-major one in place with 4-byte copies, each warp the 128
// contiguous bytes of one row (any f32 alignment; the tensor cores use its top 19 bits, a
// truncation to tf32 where the pack rounds): NT needs no pack at all, NN and TT one. Reading an
// MN-major operand in place (4-byte copies transposing on the way in) ran 1.8x slower on the H200
// than its pack, so it is not offered. f32x3
// (3xTF32) packs two planes of each, big = tf32(x) and small = tf32(x - big), stages all four tiles
// and issues small*big, big*small and big*big per k-step; each slice sums in a second accumulator
// set (zeroed by the first wgmma's scale-d = 0) that is added into the result with a rounded FADD,
// since the tensor cores' f32 sums truncate. SPLIT_K > 1 (f32 C only) cuts the slices over
// gridDim.z: block z sums its run of slices and adds alpha * its sum into C with f32 atomics,
// after a C = beta * C launch (gemm_wgmma_prepare_c); the packs still cover all of K. The space
// (configs/spaces/gemm_wgmma.yaml) repeats each type-independent static_assert.

#include "common/async_copy.cuh"
#include "common/batch.cuh"
#include "common/c_pair.cuh"
#include "common/elements.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_params.h"
#include "common/grid_dependency.cuh"
#include "common/pack_operand.cuh"
#include "common/tile_swizzle.cuh"

// ---- Tunables ---------------------------------------------------------------------
#ifndef BM
#define BM 128  // rows of C per block: WGS warpgroups of BM / WGS rows (a multiple of 64)
#endif
#ifndef BN
#define BN 256  // columns of C per block: the N of every wgmma (64, 128 or 256)
#endif
#ifndef WGS
#define WGS 2  // warpgroups (128 threads each) per block; all copy, all compute
#endif
#ifndef STAGES
#define STAGES 4  // K slices in shared memory: AHEAD copied ahead, one read (one draining)
#endif
#ifndef SWIZZLE
#define SWIZZLE 8  // blocks launched in groups of SWIZZLE tile rows, for L2 reuse of B
#endif
#ifndef PACK
#define PACK 0  // 1: 16-bit A and B packed first (any alignment); 2: tf32 packs MN-major ones only
#endif
#ifndef SPLIT_K
#define SPLIT_K 1  // K slices cut over gridDim.z, each block's sum added into an f32 C (atomics)
#endif

// ---- Derived constants --------------------------------------------------------------
#define ELEM_BYTES (TGEMM_TYPE_A == 0 ? 4 : 2)  // bytes of one A or B element
#define ROW_BYTES 128                           // one swizzled shared row (the swizzle span)
#define BK (ROW_BYTES / ELEM_BYTES)             // K depth of a slice: 64 16-bit, 32 tf32
#define WK (ELEM_BYTES == 2 ? 16 : 8)           // K of one wgmma: k16, or k8 for tf32
#define THREADS (WGS * 128)
#define WG_ROWS (BM / WGS)  // rows of C per warpgroup
#define MT (WG_ROWS / 64)   // m64 wgmma tiles per warpgroup
// The layout the main loop reads: tf32 reads the packed A [m][k] and B [n][k] (K-major).
#define F32X3 (TGEMM_COMPUTE == 2)  // 3xTF32: big and small planes of each operand
#define PLANES (F32X3 ? 2 : 1)
// The operands the loop reads from tile-padded workspace copies: 16-bit ones with PACK=1, f32
// ones always, but with tf32 PACK=2 only where MN-major (A stored [k][m], B stored [k][n]).
#define PACKED_A (ELEM_BYTES == 4 ? PACK != 2 || TGEMM_OP_A == 1 : PACK == 1)
#define PACKED_B (ELEM_BYTES == 4 ? PACK != 2 || TGEMM_OP_B == 0 : PACK == 1)
// tf32 operands read in place (PACK=2: K-major in the caller's layout).
#define DIRECT_A (ELEM_BYTES == 4 && !PACKED_A)
#define DIRECT_B (ELEM_BYTES == 4 && !PACKED_B)
#define K_MAJOR_A (TGEMM_TYPE_A == 0 || TGEMM_OP_A == 0)
#define K_MAJOR_B (TGEMM_TYPE_A == 0 || TGEMM_OP_B == 1)
#define A_TILE_BYTES (BM * ROW_BYTES)
#define B_TILE_BYTES (BN * ROW_BYTES)
#define PLANE_BYTES (A_TILE_BYTES + B_TILE_BYTES)  // A then B tiles of one plane
#define STAGE_BYTES (PLANES * PLANE_BYTES)         // f32x3: the big plane, then the small
// Slices copied ahead of the one being read. 16-bit and tf32 leave one slice's wgmmas in
// flight (wait<1>), whose stage must not be refilled yet; f32x3 drains every slice (wait<0>)
// before adding its part, so only the slice being read holds a stage.
#define AHEAD (F32X3 ? STAGES - 1 : STAGES - 2)

static_assert(TGEMM_TYPE_A == TGEMM_TYPE_B, "A and B must share one element type");
static_assert(TGEMM_TYPE_A != 0 || TGEMM_COMPUTE == 1 || TGEMM_COMPUTE == 2,
              "f32 inputs are computed as tf32 or f32x3 here");
static_assert(TGEMM_TYPE_A == 0 || TGEMM_COMPUTE == 0,
              "16-bit inputs accumulate in f32 (compute type f32)");
static_assert(TGEMM_TYPE_C == TGEMM_TYPE_A || TGEMM_TYPE_C == 0, "C must be the input type or f32");
static_assert(WGS == 1 || WGS == 2, "one or two warpgroups per block");
static_assert(BM % (64 * WGS) == 0, "each warpgroup's rows must be whole m64 tiles");
static_assert(BN == 64 || BN == 128 || BN == 256, "BN is the wgmma N: 64, 128 or 256");
static_assert(MT * BN / 2 * PLANES <= 128,
              "more than 128 accumulators per thread spill (f32x3 holds two sets)");
static_assert(STAGES >= 3 && STAGES <= 5, "STAGES must be 3..5");
static_assert(SWIZZLE >= 1, "SWIZZLE must be at least 1");
static_assert(PACK >= 0 && PACK <= 2, "PACK must be 0, 1 or 2");
static_assert(PACK != 1 || ELEM_BYTES == 2,
              "f32 inputs are packed K-major and rounded to tf32 with PACK=0: PACK=1 is for "
              "16-bit types");
static_assert(PACK != 2 || (ELEM_BYTES == 4 && !F32X3),
              "PACK=2 reads K-major tf32 operands in place: tf32 only (f32x3 splits in the pack)");
static_assert(SPLIT_K >= 1, "SPLIT_K must be at least 1");
static_assert(
    SPLIT_K == 1 || !TGEMM_EPILOGUE,
    "split-K adds its slices atomically into C: no slice is the last, to apply an epilogue");
static_assert(SPLIT_K == 1 || TGEMM_TYPE_C == 0,
              "split-K adds into C with f32 atomics: C must be f32");
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
static_assert(__CUDA_ARCH__ < 0, "gemm_wgmma needs sm_90a (wgmma.mma_async): Hopper only");
#endif

#if TGEMM_TYPE_A == 0
#define TGEMM_WG_KIND "k8.f32.tf32.tf32"
#define TGEMM_WG_TRANS(a, b) ""  // tf32 takes K-major operands only
#elif TGEMM_TYPE_A == 1
#define TGEMM_WG_KIND "k16.f32.f16.f16"
#define TGEMM_WG_TRANS(a, b) ", " a ", " b
#else
#define TGEMM_WG_KIND "k16.f32.bf16.bf16"
#define TGEMM_WG_TRANS(a, b) ", " a ", " b
#endif

namespace tgemm_wgmma {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}

// cp.async writes through the generic proxy; wgmma reads through the async one.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// One operand's slice as stored: ROWS rows of the stored matrix, CHUNKS 16-byte chunks of each
// (K-major: ROWS = BM or BN, CHUNKS = 8; MN-major: ROWS = BK, CHUNKS = BM or BN / 8). Chunk c
// of row r goes to shared row (c / 8) * ROWS + r (MN-major tiles are blocks of 64 columns),
// at position (c % 8) ^ (r % 8): the 128-byte swizzle, which wgmma undoes on the address bits.
// BOUNDED: zero-fill past the matrix edges; the packed copies are whole tiles and need none.
template <int ROWS, int CHUNKS, bool BOUNDED>
struct SliceCopy {
  static_assert((ROWS * CHUNKS) % THREADS == 0, "a slice must split over the threads");
  static_assert(THREADS % CHUNKS == 0, "each thread copies one chunk column");
  static constexpr int kPerThread = ROWS * CHUNKS / THREADS;
  static constexpr int kRowStep = THREADS / CHUNKS;  // rows between a thread's copies

  // src: the slice's first element; rows_left / bytes_left: what lies inside the matrix from
  // there (rows, and bytes of each row).
  __device__ __forceinline__ static void run(unsigned dst, const char* src, long long ld_bytes,
                                             int rows_left, long long bytes_left) {
    const int c = threadIdx.x % CHUNKS, r0 = threadIdx.x / CHUNKS;
    long long in_row = bytes_left - 16LL * c;
    const int row_bytes = in_row >= 16 ? 16 : in_row <= 0 ? 0 : int(in_row);
    const unsigned dst0 = dst + ((c / 8) * ROWS) * ROW_BYTES;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int r = r0 + i * kRowStep;
      if (!BOUNDED) {
        tgemm::cp_async_whole_unordered<16>(dst0 + r * ROW_BYTES + (((c % 8) ^ (r % 8)) * 16), src + r * ld_bytes + 16 * c);
        continue;
      }
      const int bytes = r < rows_left ? row_bytes : 0;
      const char* from = bytes > 0 ? src + r * ld_bytes + 16 * c : src;
      tgemm::cp_async_unordered<16>(dst0 + r * ROW_BYTES + (((c % 8) ^ (r % 8)) * 16), from, bytes);
    }
  }
};

// v, as a value the compiler cannot see through: the 4-byte copies' addresses are derived from
// it in every slice, where hoisted out of the K loop they would hold dozens of 64-bit
// addresses live (211 registers for a 128x64 tile, and ptxas serialized its wgmmas).
__device__ __forceinline__ long long opaque(long long v) {
  asm volatile("" : "+l"(v));
  return v;
}
__device__ __forceinline__ unsigned opaque(unsigned v) {
  asm volatile("" : "+r"(v));
  return v;
}

// tf32 read in place (PACK=2): one K-major operand's slice, ROWS rows (of C's M or N) by BK = 32
// k, into the K-major swizzled tile. Element (r, k) lands at shared byte
// r * 128 + ((k / 4) ^ (r % 8)) * 16 + (k % 4) * 4. `src` is the slice's element (0, 0);
// rows_left / k_left: what lies inside the matrix from there (zero-filled beyond). Every copy
// is predicated, interior ones too: a branch to an unchecked path, taken while the previous
// slice's wgmmas are in flight, makes ptxas serialize the wgmmas (C7515).
template <int ROWS>
struct Tf32SliceCopy {
  static constexpr int kWarps = THREADS / 32;
  static_assert(ROWS % kWarps == 0, "each warp copies whole rows");
  // Stored [rows][k], any alignment: each warp copies the 32 k of one row (128 contiguous bytes
  // in, 32 distinct banks out).
  __device__ __forceinline__ static void k_major(unsigned dst, const float* src, long long ld,
                                                 int rows_left, int k_left) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long step = opaque(kWarps * ld);
    const float* from = src + opaque(warp * ld + lane);  // row warp, k lane
    // Row r = warp + i * kWarps: r % 8 = warp ^ (i * kWarps % 8) (warp < kWarps, 4 or 8), so
    // every copy's shared address is one of two per-thread bases plus a constant.
    const unsigned base = dst + opaque(unsigned(warp * ROW_BYTES + (lane % 4) * 4));
    const unsigned chunk = opaque(unsigned(((lane / 4) ^ warp) * 16));
#pragma unroll
    for (int i = 0; i < ROWS / kWarps; ++i, from += step) {
      const int r = warp + i * kWarps;
      const bool in = r < rows_left && lane < k_left;
      const unsigned to = base + i * kWarps * ROW_BYTES + (chunk ^ ((i * kWarps % 8) * 16));
      tgemm::cp_async_unordered<4>(to, in ? from : src, in ? 4 : 0);
    }
  }
};

// A shared-memory matrix descriptor: start address, leading and stride byte offsets (16-byte
// units, 14 bits each) and the 128-byte swizzle (mode 1, bits 62-63). K-major tiles: the
// stride is 1024 bytes between 8-row groups, the leading offset unused. MN-major tiles: the
// leading offset is the distance between 64-column blocks, the stride between 8-row groups of K.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr, unsigned lead_bytes) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lead_bytes >> 4) & 0x3FFF) << 16) |
         ((unsigned long long)(1024 >> 4) << 32) | (1ULL << 62);
}
// A's descriptor for m64 rows from `row` (a multiple of 64) and k-step s of a slice.
__device__ __forceinline__ unsigned long long a_descriptor(unsigned tile, int row, int s) {
  return K_MAJOR_A
             ? descriptor(tile + row * ROW_BYTES + s * WK * ELEM_BYTES, 16)
             : descriptor(tile + (row / 64) * BK * ROW_BYTES + s * WK * ROW_BYTES, BK * ROW_BYTES);
}
__device__ __forceinline__ unsigned long long b_descriptor(unsigned tile, int s) {
  return K_MAJOR_B ? descriptor(tile + s * WK * ELEM_BYTES, 16)
                   : descriptor(tile + s * WK * ROW_BYTES, BK * ROW_BYTES);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// d (m64 x BN, f32) += A (m64 x WK) * B (WK x BN) from the descriptors; TA / TB: 1 where the
// operand is MN-major (the transpose bits, 16-bit types only).
// scale_d 0: d = A * B, the old d ignored.
template <int TA, int TB>
__device__ __forceinline__ void wgmma_tile(float (&d)[BN / 2], unsigned long long da,
                                           unsigned long long db, int scale_d = 1) {
#if BN == 64
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64" TGEMM_WG_KIND
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1" TGEMM_WG_TRANS("%35", "%36") ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
#elif BN == 128
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128" TGEMM_WG_KIND
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "
      "%60, %61, %62, %63"
      "}, %64, %65, p, 1, 1" TGEMM_WG_TRANS("%67", "%68") ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
#elif BN == 256
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256" TGEMM_WG_KIND
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
      "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "
      "%60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "
      "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, "
      "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "
      "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, "
      "%120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1" TGEMM_WG_TRANS("%131", "%132") ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(scale_d), "n"(TA), "n"(TB));
#endif
}

// The packed operands in the workspace, A then B, in whole slice tiles (pack_layout.h; the
// host sizes the workspace alike): K-major ones as [m][k] / [n][k] (every tf32 one), 16-bit
// MN-major ones as stored, [k][m] / [k][n].
__device__ __forceinline__ tgemm::PackedLayout packed_a(const tgemm::GemmParams& p) {
  return K_MAJOR_A ? tgemm::packed_layout(p.m, p.k, BM, BK, ELEM_BYTES)
                   : tgemm::packed_layout(p.k, p.m, BK, BM, ELEM_BYTES);
}
__device__ __forceinline__ tgemm::PackedLayout packed_b(const tgemm::GemmParams& p) {
  return K_MAJOR_B ? tgemm::packed_layout(p.n, p.k, BN, BK, ELEM_BYTES)
                   : tgemm::packed_layout(p.k, p.n, BK, BN, ELEM_BYTES);
}

// What the pack does to each 32-bit word: f32 rounded to tf32 once (wgmma would truncate).
struct RoundTf32 {
  __device__ __forceinline__ unsigned operator()(unsigned w) const {
    unsigned t = w;
#if TGEMM_TYPE_A == 0
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(__uint_as_float(w)));
#endif
    return t;
  }
};
// f32x3's small plane: what tf32 rounding left of the word, itself rounded to tf32.
struct SmallTf32 {
  __device__ __forceinline__ unsigned operator()(unsigned w) const {
    const float x = __uint_as_float(w);
    return RoundTf32{}(__float_as_uint(x - __uint_as_float(RoundTf32{}(w))));
  }
};

// One operand (rows of C's M or N, by k) into `dst` as `to`, from the caller's layout
// (k_major: stored [rows][k], else [k][rows]): 16-bit ones copied as stored; tf32 ones
// transposed when MN-major, plane 0 the tf32 big part, plane 1 (f32x3) the small one.
template <typename WordFn>
__device__ __forceinline__ void pack_plane(const void* src, long long ld, bool k_major,
                                           long long rows, long long k, char* dst,
                                           const tgemm::PackedLayout& to, WordFn word) {
  if (ELEM_BYTES == 2)
    tgemm::pack_operand<ELEM_BYTES>(src, ld, k_major ? rows : k, k_major ? k : rows, dst, to, word);
  else if (k_major)
    tgemm::pack_operand<ELEM_BYTES>(src, ld, rows, k, dst, to, word);
  else
    tgemm::pack_operand_transposed32(src, ld, k, rows, dst, to, word);
}
__device__ __forceinline__ void pack(const void* src, long long ld, bool k_major, long long rows,
                                     long long k, void* dst, const tgemm::PackedLayout& to) {
  char* const d = static_cast<char*>(dst);
  if (F32X3 && blockIdx.z == 1)  // the plan launches f32x3's packs with gridDim.z = 2
    pack_plane(src, ld, k_major, rows, k, d + to.bytes, to, SmallTf32{});
  else
    pack_plane(src, ld, k_major, rows, k, d, to, RoundTf32{});
}

}  // namespace tgemm_wgmma

// The packs (before the main launch). tf32: A as [m][k] and B as [n][k] from the caller's
// layout, transposing the MN-major ones; f32x3 writes each operand's big plane, then its
// small one (workspace: A big, A small, B big, B small). 16-bit: copies as stored, launched
// for PACK=1 only. Each lets the launch after it start early. Started early itself (after the
// other pack or the beta pass, whose results it neither reads nor overwrites), a pack waits
// for that grid only before it ends, so that its end implies the end of all before it: the
// main launch waits for its direct predecessor alone.
extern "C" __global__ void __launch_bounds__(256) gemm_wgmma_pack_a(const tgemm::GemmParams p) {
  tgemm::allow_next_grid();
  tgemm_wgmma::pack(p.a, p.lda, !TGEMM_OP_A, p.m, p.k, p.workspace, tgemm_wgmma::packed_a(p));
  tgemm::wait_for_prior_grid();
}
extern "C" __global__ void __launch_bounds__(256) gemm_wgmma_pack_b(const tgemm::GemmParams p) {
  using namespace tgemm_wgmma;
  tgemm::allow_next_grid();
  void* const dst = static_cast<char*>(p.workspace) + (PACKED_A ? PLANES * packed_a(p).bytes : 0);
  pack(p.b, p.ldb, TGEMM_OP_B, p.n, p.k, dst, packed_b(p));
  tgemm::wait_for_prior_grid();
}

// C = beta * C (zero when beta == 0): run before a split-K launch, whose blocks add into C.
extern "C" __global__ void gemm_wgmma_prepare_c(const tgemm::GemmParams p) {
  tgemm::allow_next_grid();
  tgemm::scale_c_by_beta<tgemm::ElementC>(p);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma(const tgemm::GemmParams batched TGEMM_EPILOGUE_PARAMETER) {
  using namespace tgemm_wgmma;
  const tgemm::GemmParams& p = tgemm::batch_operands<SPLIT_K>(batched);  // this block's A, B
  extern __shared__ char smem_raw[];
  // Stages start on 1024-byte boundaries (the swizzle pattern's period): the host adds 1 KiB.
  const unsigned smem = (smem_address(smem_raw) + 1023u) & ~1023u;

  int tile_m, tile_n;
  tgemm::swizzled_tile(SWIZZLE, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;  // this block's first row and column of C
  const int wg = threadIdx.x / 128;              // this thread's warpgroup
  // This block's K slices: [kt0, kt0 + k_tiles) of all, per = ceil(slices / SPLIT_K) each; a
  // block past the end (K short for the split) has none and adds nothing.
  const int all_tiles = (p.k + BK - 1) / BK;
  const int per = (all_tiles + SPLIT_K - 1) / SPLIT_K;
  const int kt0 = SPLIT_K == 1 ? 0 : int(blockIdx.z) * per;
  const int k_tiles = min(per, all_tiles - kt0);
  if (SPLIT_K > 1 && k_tiles <= 0) return;  // the whole block: no barrier is left waiting
  // Launched after packs or the beta pass, this grid may have started early: their results
  // (the packed operands, C scaled) are complete and visible only past this wait.
  tgemm::wait_for_prior_grid();

  // The operands as the loop reads them: the caller's, or the packed copies.
  const char* a = static_cast<const char*>(p.a);
  const char* b = static_cast<const char*>(p.b);
  const char *a_small = a, *b_small = b;  // f32x3's small planes
  long long lda = p.lda, ldb = p.ldb;
  const char* workspace = static_cast<const char*>(p.workspace);  // A's copy, then B's
  if (PACKED_A) {
    const tgemm::PackedLayout la = packed_a(p);
    a = workspace;
    a_small = a + la.bytes;
    lda = la.ld;
    workspace += PLANES * la.bytes;
  }
  if (PACKED_B) {
    const tgemm::PackedLayout lb = packed_b(p);
    b = workspace;
    b_small = b + lb.bytes;
    ldb = lb.ld;
  }
  // Slice kt (of all K) of A and B into the shared tile at `at`, bounded by the matrix edges
  // (the packed copies are whole tiles: no bounds).
  auto copy_plane = [&](int kt, unsigned at, const char* a, const char* b) {
    const int k0 = kt * BK;
    if (DIRECT_A)
      Tf32SliceCopy<BM>::k_major(at, reinterpret_cast<const float*>(a) + (long long)m0 * lda + k0,
                                 lda, p.m - m0, p.k - k0);
    else if (K_MAJOR_A)
      SliceCopy<BM, ROW_BYTES / 16, !PACKED_A>::run(at, a + ((long long)m0 * lda + k0) * ELEM_BYTES,
                                                    lda * ELEM_BYTES, p.m - m0,
                                                    (long long)(p.k - k0) * ELEM_BYTES);
    else
      SliceCopy<BK, BM * ELEM_BYTES / 16, !PACKED_A>::run(
          at, a + ((long long)k0 * lda + m0) * ELEM_BYTES, lda * ELEM_BYTES, p.k - k0,
          (long long)(p.m - m0) * ELEM_BYTES);
    if (DIRECT_B)
      Tf32SliceCopy<BN>::k_major(at + A_TILE_BYTES,
                                 reinterpret_cast<const float*>(b) + (long long)n0 * ldb + k0, ldb,
                                 p.n - n0, p.k - k0);
    else if (K_MAJOR_B)
      SliceCopy<BN, ROW_BYTES / 16, !PACKED_B>::run(
          at + A_TILE_BYTES, b + ((long long)n0 * ldb + k0) * ELEM_BYTES, ldb * ELEM_BYTES,
          p.n - n0, (long long)(p.k - k0) * ELEM_BYTES);
    else
      SliceCopy<BK, BN * ELEM_BYTES / 16, !PACKED_B>::run(
          at + A_TILE_BYTES, b + ((long long)k0 * ldb + n0) * ELEM_BYTES, ldb * ELEM_BYTES,
          p.k - k0, (long long)(p.n - n0) * ELEM_BYTES);
  };
  // This block's slice kt (f32x3: of both planes) into stage `stage`.
  auto copy_slice = [&](int kt, int stage) {
    const unsigned at = smem + stage * STAGE_BYTES;
    copy_plane(kt0 + kt, at, a, b);
    if (F32X3) copy_plane(kt0 + kt, at + PLANE_BYTES, a_small, b_small);
  };

  float acc[MT][BN / 2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[mt][i] = 0.0f;

#if F32X3
  // One slice of 3xTF32 in `part`: small terms first (they are tiny), the slice's first wgmma
  // with scale-d 0 so part starts at zero; then part is added into acc, rounding to nearest.
  // The wait drains this slice's wgmmas before the FADDs (stricter than the wait<1> above).
  float part[MT][BN / 2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) part[mt][i] = 0.0f;  // never read (scale-d 0): defined
  auto compute_slice_f32x3 = [&](unsigned stage) {
    const unsigned small = stage + PLANE_BYTES;
#pragma unroll
    for (int s = 0; s < BK / WK; ++s)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const int row = wg * WG_ROWS + mt * 64;
        const unsigned long long a_big = a_descriptor(stage, row, s);
        const unsigned long long b_big = b_descriptor(stage + A_TILE_BYTES, s);
        wgmma_tile<0, 0>(part[mt], a_descriptor(small, row, s), b_big, s == 0 ? 0 : 1);
        wgmma_tile<0, 0>(part[mt], a_big, b_descriptor(small + A_TILE_BYTES, s));
        wgmma_tile<0, 0>(part[mt], a_big, b_big);
      }
    wgmma_commit();
    wgmma_wait<0>();  // the part is read next, and the stage is free for the copy (AHEAD)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[mt][i] += part[mt][i];
  };
#endif

#pragma unroll
  for (int s = 0; s < AHEAD; ++s) {
    if (s < k_tiles) copy_slice(s, s);
    tgemm::cp_async_commit_unordered();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    tgemm::cp_async_wait_unordered<AHEAD - 1>();  // slice kt has landed (this thread's copies)
    fence_async_shared();
    // Everyone's copies of slice kt are visible; every warpgroup has waited out the wgmmas of
    // slice kt + AHEAD - STAGES (kt - 2, or kt - 1 for f32x3), whose stage the copy refills.
    __syncthreads();
    const int next = kt + AHEAD;
    if (next < k_tiles) copy_slice(next, next % STAGES);
    tgemm::cp_async_commit_unordered();
    const unsigned stage = smem + (kt % STAGES) * STAGE_BYTES;
    wgmma_fence();
#if F32X3
    compute_slice_f32x3(stage);
#else
#pragma unroll
    for (int s = 0; s < BK / WK; ++s)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        wgmma_tile<!K_MAJOR_A, !K_MAJOR_B>(acc[mt], a_descriptor(stage, wg * WG_ROWS + mt * 64, s),
                                           b_descriptor(stage + A_TILE_BYTES, s));
    wgmma_commit();
    wgmma_wait<1>();  // slice kt - 1's wgmmas are done: its stage may be refilled next time
#endif
  }
  wgmma_wait<0>();

  // Epilogue: accumulator 4j + e of m64 tile mt is C row (warp's 16 rows) + g + 8 * (e / 2),
  // column n0 + 8j + 2t + e % 2, with g = lane / 4 and t = lane % 4.
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const int g = lane / 4, t = lane % 4;
  const tgemm::GemmParams& pc = tgemm::batch_c<SPLIT_K>(p);  // and its C
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int row = m0 + wg * WG_ROWS + mt * 64 + warp * 16 + g;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = n0 + j * 8 + 2 * t;
#if TGEMM_EPILOGUE
      tgemm::store_output_pair(pc, epilogue, row, col, acc[mt][4 * j], acc[mt][4 * j + 1]);
      tgemm::store_output_pair(pc, epilogue, row + 8, col, acc[mt][4 * j + 2], acc[mt][4 * j + 3]);
#else
      if (SPLIT_K == 1) {
        store_c_pair(pc, row, col, acc[mt][4 * j], acc[mt][4 * j + 1]);
        store_c_pair(pc, row + 8, col, acc[mt][4 * j + 2], acc[mt][4 * j + 3]);
      } else {
        add_c_pair(pc, row, col, acc[mt][4 * j], acc[mt][4 * j + 1]);
        add_c_pair(pc, row + 8, col, acc[mt][4 * j + 2], acc[mt][4 * j + 3]);
      }
#endif
    }
  }
}
