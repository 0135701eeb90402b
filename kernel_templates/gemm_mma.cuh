// gemm_mma: GEMM on the tensor cores through mma.sync, f32 accumulation, row-major storage.
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
// Inputs f16 / bf16 (m16n8k16; m16n8k8 on sm_75), or f32 computed as tf32 (one m16n8k8
// pass) or f32x3 (3xTF32: each input split into a tf32 big part and a tf32 small part, three
// passes). A block computes a BM x BN tile of C; each warp a WM x WN part of it. K is walked
// in BK_BYTES-deep slices staged in shared memory: cp.async multi-stage pipelines on sm_80+,
// register-staged double buffering on sm_75 (and for 2-byte copies, which cp.async lacks).
// Copies are VEC_BYTES wide and zero-fill past the matrix edges, so any M, N, K, leading
// dimension and pointer alignment runs the same tensor-core path. Fragments come from
// shared memory through ldmatrix (16-bit types) or 32-bit loads (f32), from an XOR-swizzled
// or padded layout. PACK=1 first copies A and B into the workspace as dense tile-padded
// matrices (common/pack_operand.cuh, entries gemm_mma_pack_a/_b), so misaligned operands run
// the 16-byte cp.async pipeline with no bounds; PACK=2 also transposes f32 operands stored
// K-major, so their fragments come through ldmatrix too (and tf32 is rounded in the pack).
// The space (configs/spaces/gemm_mma.yaml) repeats each static_assert.

#include "common/async_copy.cuh"
#include "common/batch.cuh"
#include "common/c_pair.cuh"
#include "common/elements.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_params.h"
#include "common/pack_operand.cuh"
#include "common/tile_swizzle.cuh"

// ---- Tunables ---------------------------------------------------------------------
#ifndef BM
#define BM 128  // rows of C per block
#endif
#ifndef BN
#define BN 128  // columns of C per block
#endif
#ifndef BK_BYTES
#define BK_BYTES 64  // depth of a K slice in bytes of one element row: 32 f16 or 16 f32
#endif
#ifndef WM
#define WM 64  // rows of C per warp
#endif
#ifndef WN
#define WN 64  // columns of C per warp
#endif
#ifndef STAGES
#define STAGES 3  // K slices in flight (cp.async); 2 = double buffer, the only one on sm_75
#endif
#ifndef VEC_BYTES
#define VEC_BYTES 16  // bytes per global copy (16, 8, 4; 2 for 16-bit types): the alignment
#endif
#ifndef SHIFT_COPY
#define SHIFT_COPY 0  // 1: 16-byte copies at any element alignment (two aligned loads, shifted)
#endif
#ifndef PACK
#define PACK 0  // 1: A and B packed into the workspace first (any alignment, 16-byte copies);
#endif          // 2: as 1, and f32 operands transposed K-contiguous (16-bit: as 1)
#ifndef SMEM_XOR
#define SMEM_XOR 1  // 1: XOR-swizzled shared layout; 0: rows padded by 16 bytes
#endif
#ifndef SPLIT_K
#define SPLIT_K 1  // K cut into SPLIT_K slices, one per gridDim.z, added into an f32 C
#endif
#ifndef SWIZZLE
#define SWIZZLE 1  // blocks launched in groups of SWIZZLE tile rows, for L2 reuse of B
#endif
// Not tuned: 1 keeps only big*big of 3xTF32, so a test can build a kernel that is too
// inaccurate for f32x3 and watch the evaluator reject it.
#ifndef F32X3_TERMS
#define F32X3_TERMS 3
#endif

// ---- Derived constants --------------------------------------------------------------
// The layout the packs read (the caller's) and, as TGEMM_OP_A/B from here on, the one the
// main kernel reads: PACK=2 stores f32 A as [m][k] and B as [n][k] whatever the caller's.
#if TGEMM_OP_A
#define TGEMM_SRC_OP_A 1
#else
#define TGEMM_SRC_OP_A 0
#endif
#if TGEMM_OP_B
#define TGEMM_SRC_OP_B 1
#else
#define TGEMM_SRC_OP_B 0
#endif
#if PACK == 2 && TGEMM_TYPE_A == 0
#undef TGEMM_OP_A
#define TGEMM_OP_A 0
#undef TGEMM_OP_B
#define TGEMM_OP_B 1
#endif
#define ELEM_BYTES (TGEMM_TYPE_A == 0 ? 4 : 2)  // bytes of one A or B element
#define BK (BK_BYTES / ELEM_BYTES)              // K depth of a slice in elements
#define WARPS_N (BN / WN)
#define THREADS ((BM / WM) * WARPS_N * 32)
#define MMA_K (ELEM_BYTES == 2 ? 16 : 8)  // K of one k-step: m16n8k16, or m16n8k8 for tf32
#define MI (WM / 16)                      // mma tiles of a warp along M
#define NI (WN / 8)                       // mma tiles of a warp along N
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && VEC_BYTES >= 4 && !SHIFT_COPY
#define TGEMM_MMA_ASYNC 1  // cp.async pipeline
#else
#define TGEMM_MMA_ASYNC 0  // register-staged double buffer
#endif
// Double-buffered fragments in the cp.async pipeline's interior slices: with 16-byte copies
// only (narrower ones take more registers, and the loop spills), on 64x64 warp tiles or f32
// inputs. Smaller 16-bit warp tiles fit 128 registers (two 8-warp blocks per SM) only with
// one k-step's fragments: double-buffered, they lose the second block per SM.
#define TGEMM_MMA_FRAG_DB \
  (TGEMM_MMA_ASYNC && VEC_BYTES == 16 && (WM * WN == 4096 || ELEM_BYTES == 4))

static_assert(TGEMM_TYPE_A == TGEMM_TYPE_B, "A and B must share one element type");
static_assert(TGEMM_TYPE_A != 0 || TGEMM_COMPUTE == 1 || TGEMM_COMPUTE == 2,
              "f32 inputs are computed as tf32 or f32x3 (FFMA-accurate f32 is another family's)");
static_assert(TGEMM_TYPE_A == 0 || TGEMM_COMPUTE == 0,
              "16-bit inputs accumulate in f32 (compute type f32)");
static_assert(TGEMM_TYPE_C == TGEMM_TYPE_A || TGEMM_TYPE_C == 0, "C must be the input type or f32");
static_assert(
    SPLIT_K == 1 || !TGEMM_EPILOGUE,
    "split-K adds its slices atomically into C: no slice is the last, to apply an epilogue");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
static_assert(TGEMM_TYPE_A == 1, "sm_75 tensor cores take f16 only (m16n8k8)");
static_assert(STAGES == 2, "sm_75 has no cp.async: only the register-staged double buffer");
#endif
static_assert(STAGES >= 2 && STAGES <= 5, "STAGES must be 2..5");
static_assert(TGEMM_MMA_ASYNC || STAGES == 2,
              "the register-staged pipeline (sm_75, 2-byte copies) is a double buffer");
static_assert(VEC_BYTES == 2 || VEC_BYTES == 4 || VEC_BYTES == 8 || VEC_BYTES == 16,
              "VEC_BYTES must be 2, 4, 8 or 16");
static_assert(VEC_BYTES >= ELEM_BYTES, "a copy must hold whole elements");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
static_assert(WM % 16 == 0 && WN % 16 == 0, "WM and WN must be multiples of 16");
static_assert(BK % MMA_K == 0, "BK_BYTES must hold whole mma k-steps (32 bytes)");
static_assert(THREADS <= 1024, "at most 1024 threads per block");
static_assert((BM * BK_BYTES / VEC_BYTES) % THREADS == 0, "A's slice must split over the threads");
static_assert((BN * BK_BYTES / VEC_BYTES) % THREADS == 0, "B's slice must split over the threads");
static_assert(SPLIT_K >= 1 && (SPLIT_K == 1 || TGEMM_TYPE_C == 0),
              "split-K adds into C with f32 atomics: C must be f32");
static_assert(SWIZZLE >= 1, "SWIZZLE must be at least 1");
static_assert(SHIFT_COPY == 0 || (VEC_BYTES == 16 && STAGES == 2),
              "SHIFT_COPY loads 16-byte words into registers: VEC_BYTES=16, STAGES=2");
static_assert(F32X3_TERMS == 1 || F32X3_TERMS == 3, "F32X3_TERMS must be 1 or 3");
static_assert(PACK >= 0 && PACK <= 2, "PACK must be 0, 1 or 2");
static_assert(PACK == 0 || (VEC_BYTES == 16 && SHIFT_COPY == 0),
              "PACK reads the packed copies with 16-byte copies: VEC_BYTES=16, SHIFT_COPY=0");

namespace tgemm_mma {

// The bits of one element as stored in shared memory.
template <int Bytes>
struct BitsOf {
  using type = unsigned short;
};
template <>
struct BitsOf<4> {
  using type = unsigned;
};
using Bits = typename BitsOf<ELEM_BYTES>::type;

// The register word of one VEC_BYTES copy.
template <int Bytes>
struct WordOf;
template <>
struct WordOf<2> {
  using type = unsigned short;
};
template <>
struct WordOf<4> {
  using type = unsigned;
};
template <>
struct WordOf<8> {
  using type = uint2;
};
template <>
struct WordOf<16> {
  using type = uint4;
};
constexpr int kElemsPerCopy = VEC_BYTES / ELEM_BYTES;
union CopyWord {
  typename WordOf<VEC_BYTES>::type word;
  Bits elems[kElemsPerCopy];
};

__device__ __forceinline__ unsigned smem_address(const void* p) {
  unsigned addr;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(addr) : "l"(p));
  return addr;
}

// A ROWS x COLS tile of elements in shared memory, COLS contiguous. SMEM_XOR: 16-byte chunk
// c of row r sits at chunk c ^ f(r), so 8 consecutive rows' chunk c fall in 8 different
// bank groups (conflict-free ldmatrix without padding); otherwise rows are 16 bytes apart
// from dense, which shifts each row by four banks. SCALAR tiles (f32 stored K-major, read
// with 32-bit loads of 4 rows x 8 columns) use f(r) = 2 * (r % 4), conflict-free for those.
// f repeats every kPeriod rows, so moving kPeriod rows down is a plain add.
template <int ROWS, int COLS, bool SCALAR = false>
struct SmemTile {
  static constexpr int kChunkElems = 16 / ELEM_BYTES;
  static constexpr int kChunks = COLS / kChunkElems;  // 16-byte chunks per row
  static constexpr int kXorSpan = kChunks < 8 ? kChunks : 8;
  static constexpr int kRowsPerXor = 8 / kXorSpan;  // rows sharing one XOR pattern
  static constexpr int kPeriod = SMEM_XOR ? (SCALAR ? 4 : 8) : 1;
  static constexpr int kStride = SMEM_XOR ? COLS : COLS + kChunkElems;
  static constexpr int kElems = ROWS * kStride;
  static_assert(COLS % kChunkElems == 0, "tile rows must be whole 16-byte chunks");
  static_assert(!SMEM_XOR || (COLS & (COLS - 1)) == 0, "XOR swizzle needs power-of-two rows");
  static_assert(!SCALAR || kChunks >= 8, "a scalar-read tile needs rows of 128 bytes or more");

  __device__ __forceinline__ static int offset(int r, int c) {
    if (SMEM_XOR) {
      const unsigned f =
          SCALAR ? (unsigned(r) % 4u) * 2u : (unsigned(r) / kRowsPerXor) % unsigned(kXorSpan);
      const unsigned chunk = (unsigned(c) / kChunkElems) ^ f;
      return r * COLS + int(chunk) * kChunkElems + c % kChunkElems;
    }
    return r * kStride + c;
  }
};

// Moves one operand's slice, ROWS x COLS of global memory (COLS contiguous) from (row0,
// col0), into a SmemTile. Elements at rows >= row_end or columns >= col_end read as zero,
// so edge tiles add nothing. Copy v of the slice is row v / kCopiesPerRow.
template <int ROWS, int COLS, bool SCALAR>
struct SliceCopy {
  using Tile = SmemTile<ROWS, COLS, SCALAR>;
  static constexpr int kCopiesPerRow = COLS / kElemsPerCopy;
  static constexpr int kCopies = ROWS * kCopiesPerRow / THREADS;  // per thread
  // Copy l + 1 is kRowStep rows below copy l, in the same columns (when kStepped).
  static constexpr bool kStepped = THREADS % kCopiesPerRow == 0;
  static constexpr int kRowStep = kStepped ? THREADS / kCopiesPerRow : 1;
  static constexpr bool kPlainStep = kStepped && kRowStep % Tile::kPeriod == 0;
  CopyWord reg[TGEMM_MMA_ASYNC ? 1 : kCopies];

  // Bytes of copy l that lie inside the matrix (0..VEC_BYTES), and its source.
  __device__ __forceinline__ static int source(const Bits* g, long long ld, int row0, int col0,
                                               int row_end, int col_end, int l, int* r, int* c,
                                               const Bits** src) {
    const int v = threadIdx.x + l * THREADS;
    *r = v / kCopiesPerRow;
    *c = (v % kCopiesPerRow) * kElemsPerCopy;
    const int gr = row0 + *r, gc = col0 + *c;
    int bytes = (col_end - gc) * ELEM_BYTES;
    bytes = gr < row_end ? (bytes < 0 ? 0 : bytes > VEC_BYTES ? VEC_BYTES : bytes) : 0;
    *src = bytes > 0 ? g + (long long)gr * ld + gc : g;  // nothing is read at 0 bytes
    return bytes;
  }

  __device__ __forceinline__ static void cp_async(unsigned dst, const Bits* src, int bytes) {
#if TGEMM_MMA_ASYNC
    tgemm::cp_async_unordered<VEC_BYTES>(dst, src, bytes);
#endif
  }

  // cp.async with zero fill of the bytes past the edge (sm_80+). A slice wholly inside the
  // matrix (the common case) skips the per-copy bounds: copy l is copy 0 plus l row steps.
  __device__ __forceinline__ static void async_copy(Bits* s, const Bits* g, long long ld, int row0,
                                                    int col0, int row_end, int col_end) {
#if TGEMM_MMA_ASYNC
    if (kPlainStep && (PACK || (row0 + ROWS <= row_end && col0 + COLS <= col_end))) {
      const int r = threadIdx.x / kCopiesPerRow, c = (threadIdx.x % kCopiesPerRow) * kElemsPerCopy;
      const Bits* const src = g + (long long)(row0 + r) * ld + (col0 + c);
      const unsigned dst = smem_address(s + Tile::offset(r, c));
      const long long step = kRowStep * ld;
#pragma unroll
      for (int l = 0; l < kCopies; ++l)
        cp_async(dst + l * kRowStep * Tile::kStride * ELEM_BYTES, src + l * step, VEC_BYTES);
      return;
    }
#pragma unroll
    for (int l = 0; l < kCopies; ++l) {
      int r, c;
      const Bits* src;
      const int bytes = source(g, ld, row0, col0, row_end, col_end, l, &r, &c, &src);
      cp_async(smem_address(s + Tile::offset(r, c)), src, bytes);
    }
#endif
  }

  __device__ __forceinline__ void load(const Bits* g, long long ld, int row0, int col0, int row_end,
                                       int col_end) {
#pragma unroll
    for (int l = 0; l < (TGEMM_MMA_ASYNC ? 0 : kCopies); ++l) {
      int r, c;
      const Bits* src;
      const int bytes = source(g, ld, row0, col0, row_end, col_end, l, &r, &c, &src);
      if (SHIFT_COPY) {
        if (bytes > 0)
          *reinterpret_cast<uint4*>(&reg[l].word) = tgemm::load_shifted16(src, bytes);
        else
          *reinterpret_cast<uint4*>(&reg[l].word) = make_uint4(0, 0, 0, 0);
      } else if (bytes == VEC_BYTES) {
        reg[l].word = *reinterpret_cast<const typename WordOf<VEC_BYTES>::type*>(src);
      } else {
#pragma unroll
        for (int e = 0; e < kElemsPerCopy; ++e)
          reg[l].elems[e] = e * ELEM_BYTES < bytes ? src[e] : 0;
      }
    }
  }

  __device__ __forceinline__ void store(Bits* s) const {
#pragma unroll
    for (int l = 0; l < (TGEMM_MMA_ASYNC ? 0 : kCopies); ++l) {
      const int v = threadIdx.x + l * THREADS;
      const int r = v / kCopiesPerRow, c = (v % kCopiesPerRow) * kElemsPerCopy;
      *reinterpret_cast<typename WordOf<VEC_BYTES>::type*>(s + Tile::offset(r, c)) = reg[l].word;
    }
  }
};


// Four 8x8 matrices of 16-bit elements (or 8x4 of 32-bit ones: lane l gets element (l / 4,
// l % 4) of each); lane l gives the shared address of row l % 8 of matrix l / 8.
template <bool Trans>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned a) {
  if (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

__device__ __forceinline__ unsigned ld_shared_u32(unsigned a) {
  unsigned v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a));
  return v;
}

// d += a * b on one 16x8 tile, 16-bit inputs, K = 16 (two K = 8 mma on sm_75).
__device__ __forceinline__ void mma_16bit(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                          unsigned b1) {
#if __CUDA_ARCH__ >= 800
#if TGEMM_TYPE_A == 2
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
#else
  // The K = 16 fragment is two K = 8 ones: a0/a1 with b0 cover k 0..7, a2/a3 with b1 k 8..15.
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b0));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[2]), "r"(a[3]), "r"(b1));
#endif
}

// d += a * b on one 16x8 tile of tf32 operands, K = 8 (sm_80+).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
#if __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// x rounded to tf32 (nearest, ties away), as the bits mma reads.
__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned t = 0;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(x));
#endif
  return t;
}

// An f32 operand as tf32: big = tf32(x) and, for f32x3, small = tf32(x - big). A tf32 pack
// stored the operands rounded already (PackWord), so the loop skips the cvt.
struct Split {
  unsigned big, small;
};
__device__ __forceinline__ Split split_tf32(unsigned bits) {
  const float x = __uint_as_float(bits);
  Split s;
  s.big = PACK && TGEMM_COMPUTE == 1 ? bits : to_tf32(x);
  s.small = TGEMM_COMPUTE == 2 ? to_tf32(x - __uint_as_float(s.big)) : 0u;
  return s;
}

// The C elements (row, col) and (row, col + 1) of this thread: alpha * acc + beta * C, or
// with split-K alpha * acc added into the f32 C the beta pre-pass wrote. An epilogue's build
// writes D through common/epilogue.cuh instead (its kernel calls store_output_pair).
__device__ __forceinline__ void store_pair(const tgemm::GemmParams& p, int row, int col, float v0,
                                           float v1) {
  if (SPLIT_K == 1) return store_c_pair(p, row, col, v0, v1);
  add_c_pair(p, row, col, v0, v1);  // C is f32 (static_assert)
}

// The packed copies of A ([m][k] or, T, [k][m]) and B ([k][n] or [n][k]) in the workspace,
// B after A, in whole slice tiles (pack_layout.h; the host sizes the workspace alike).
__device__ __forceinline__ tgemm::PackedLayout packed_a(const tgemm::GemmParams& p) {
  return TGEMM_OP_A ? tgemm::packed_layout(p.k, p.m, BK, BM, ELEM_BYTES)
                    : tgemm::packed_layout(p.m, p.k, BM, BK, ELEM_BYTES);
}
__device__ __forceinline__ tgemm::PackedLayout packed_b(const tgemm::GemmParams& p) {
  return TGEMM_OP_B ? tgemm::packed_layout(p.n, p.k, BN, BK, ELEM_BYTES)
                    : tgemm::packed_layout(p.k, p.n, BK, BN, ELEM_BYTES);
}

// What a pack does to each 32-bit word: tf32 rounds f32 once here instead of in the loop.
struct PackWord {
  __device__ __forceinline__ unsigned operator()(unsigned w) const {
    return ELEM_BYTES == 4 && TGEMM_COMPUTE == 1 ? to_tf32(__uint_as_float(w)) : w;
  }
};

}  // namespace tgemm_mma

// C = beta * C (zero when beta == 0): run before a split-K launch, whose slices add into C.
extern "C" __global__ void gemm_mma_prepare_c(const tgemm::GemmParams p) {
  tgemm::scale_c_by_beta<tgemm::ElementC>(p);
}

#if PACK
// The pack pre-passes (before the main launch): A, then B, into their packed copies, from
// the caller's layout (SRC) into the main kernel's, transposing where the two differ.
extern "C" __global__ void __launch_bounds__(256) gemm_mma_pack_a(const tgemm::GemmParams p) {
  const long long rows = TGEMM_SRC_OP_A ? p.k : p.m, cols = TGEMM_SRC_OP_A ? p.m : p.k;
  if (TGEMM_SRC_OP_A != TGEMM_OP_A)
    tgemm::pack_operand_transposed32(p.a, p.lda, rows, cols, p.workspace, tgemm_mma::packed_a(p),
                                     tgemm_mma::PackWord{});
  else
    tgemm::pack_operand<ELEM_BYTES>(p.a, p.lda, rows, cols, p.workspace, tgemm_mma::packed_a(p),
                                    tgemm_mma::PackWord{});
}
extern "C" __global__ void __launch_bounds__(256) gemm_mma_pack_b(const tgemm::GemmParams p) {
  const long long rows = TGEMM_SRC_OP_B ? p.n : p.k, cols = TGEMM_SRC_OP_B ? p.k : p.n;
  void* const dst = static_cast<char*>(p.workspace) + tgemm_mma::packed_a(p).bytes;
  if (TGEMM_SRC_OP_B != TGEMM_OP_B)
    tgemm::pack_operand_transposed32(p.b, p.ldb, rows, cols, dst, tgemm_mma::packed_b(p),
                                     tgemm_mma::PackWord{});
  else
    tgemm::pack_operand<ELEM_BYTES>(p.b, p.ldb, rows, cols, dst, tgemm_mma::packed_b(p),
                                    tgemm_mma::PackWord{});
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_mma(TGEMM_BATCH_PARAMETER TGEMM_EPILOGUE_PARAMETER) {
  using namespace tgemm_mma;
  const auto& p = tgemm::batch_operands<SPLIT_K>(batched);  // this block's A, B (and problem)
  // Shared tiles as stored in global memory: A is [m][k] (N) or [k][m] (T), B [k][n] or [n][k].
  // f32 stored K-major (A T, B N) is read with 32-bit loads, the rest with ldmatrix.
  constexpr bool kScalarA = ELEM_BYTES == 4 && TGEMM_OP_A == 1;
  constexpr bool kScalarB = ELEM_BYTES == 4 && TGEMM_OP_B == 0;
  using CopyA = SliceCopy<TGEMM_OP_A ? BK : BM, TGEMM_OP_A ? BM : BK, kScalarA>;
  using CopyB = SliceCopy<TGEMM_OP_B ? BN : BK, TGEMM_OP_B ? BK : BN, kScalarB>;
  using TileA = typename CopyA::Tile;
  using TileB = typename CopyB::Tile;
  constexpr int kStageElems = TileA::kElems + TileB::kElems;
  extern __shared__ uint4 smem_raw[];  // uint4: 16-byte alignment for copies and ldmatrix
  Bits* const smem = reinterpret_cast<Bits*>(smem_raw);

  // Where each operand is read, and its bounds along M (N) and K: the caller's matrices, or
  // their packed copies, whose zero padding covers every slice (bounds: the padded sizes).
  const Bits* a_ptr = static_cast<const Bits*>(p.a);
  const Bits* b_ptr = static_cast<const Bits*>(p.b);
  long long lda = p.lda, ldb = p.ldb;
  int a_m_end = p.m, b_n_end = p.n, a_k_end = p.k, b_k_end = p.k;
  if (PACK) {
    const tgemm::PackedLayout la = packed_a(p), lb = packed_b(p);
    a_ptr = static_cast<const Bits*>(p.workspace);
    b_ptr = reinterpret_cast<const Bits*>(static_cast<const char*>(p.workspace) + la.bytes);
    lda = la.ld;
    ldb = lb.ld;
    a_m_end = int(TGEMM_OP_A ? la.ld : la.rows);
    a_k_end = int(TGEMM_OP_A ? la.rows : la.ld);
    b_n_end = int(TGEMM_OP_B ? lb.rows : lb.ld);
    b_k_end = int(TGEMM_OP_B ? lb.ld : lb.rows);
  }
  int tile_m, tile_n;
  tgemm::batch_tile(p, SWIZZLE, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;

  // This split-K slice covers k in [k_begin, k_end), whole BK slices apart from the last.
  const tgemm::KSlice ks = tgemm::k_slice(p.k, BK, SPLIT_K, tgemm::split_k_slice<SPLIT_K>());
  const int k_begin = ks.begin, k_end = ks.end, k_tiles = ks.tiles;
  // Unpacked operands read zeros past this slice's end; packed ones hold zeros there.
  if (!PACK) a_k_end = b_k_end = k_end;

  // Warp (warp / WARPS_N, warp % WARPS_N) owns C rows wm0.. and columns wn0.. of the tile;
  // in an mma fragment, lane holds row g (and g + 8) and columns 2t, 2t + 1 (tf32: t, t + 4).
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int g = lane / 4, t = lane % 4;

  CopyA copy_a;
  CopyB copy_b;
  // Slice k0 of both operands, straight into shared memory (async) or into registers.
  // inside (a constant at each call): the slice lies wholly inside the matrices, so the edges
  // are given as the slice's own ends and only the bounds-free copy is compiled (the bounded
  // one, kept in a loop, costs about 40 registers).
  auto copy_slice = [&](Bits* stage, int k0, bool inside) {
    const int am_end = inside ? m0 + BM : a_m_end, bn_end = inside ? n0 + BN : b_n_end;
    const int ak_end = inside ? k0 + BK : a_k_end, bk_end = inside ? k0 + BK : b_k_end;
    Bits* const as = stage;
    Bits* const bs = stage + TileA::kElems;
    if (TGEMM_MMA_ASYNC) {
      if (TGEMM_OP_A)
        CopyA::async_copy(as, a_ptr, lda, k0, m0, ak_end, am_end);
      else
        CopyA::async_copy(as, a_ptr, lda, m0, k0, am_end, ak_end);
      if (TGEMM_OP_B)
        CopyB::async_copy(bs, b_ptr, ldb, n0, k0, bn_end, bk_end);
      else
        CopyB::async_copy(bs, b_ptr, ldb, k0, n0, bk_end, bn_end);
    } else {
      if (TGEMM_OP_A)
        copy_a.load(a_ptr, lda, k0, m0, ak_end, am_end);
      else
        copy_a.load(a_ptr, lda, m0, k0, am_end, ak_end);
      if (TGEMM_OP_B)
        copy_b.load(b_ptr, ldb, n0, k0, bn_end, bk_end);
      else
        copy_b.load(b_ptr, ldb, k0, n0, bk_end, bn_end);
    }
  };

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  // Fragment addresses, computed once. Each operand's reads vary along two indices: one
  // moves whole rows of its tile, a multiple of the swizzle's period (a compile-time add),
  // the other moves columns through the XOR (one offset per value, kept in registers).
  // Lane l addresses row l % 8 of 8x8 matrix j = l / 8 (ldmatrix). A: a0..a3 are (m 0-7 |
  // 8-15) x (k lo | hi), m fastest; B: two n8 tiles' b0, b1, k fastest. .trans when the
  // stored rows run along K instead of the fragment's rows.
  constexpr int KSTEPS = BK / MMA_K, CE = 16 / ELEM_BYTES;  // CE: elements per 16 bytes
  constexpr int A_XN = kScalarA ? 2 * MI : TGEMM_OP_A ? MI : KSTEPS;
  constexpr int B_XN = kScalarB ? NI : TGEMM_OP_B ? KSTEPS : NI / 2;
  const int j = lane / 8, r8 = lane % 8;
  unsigned a_off[A_XN], b_off[B_XN];  // byte offsets within a stage
#pragma unroll
  for (int x = 0; x < A_XN; ++x) {
    int e;
    if (kScalarA)  // element (m g (+8), k t) at row k, column m
      e = TileA::offset(t, wm0 + (x / 2) * 16 + (x % 2) * 8 + g);
    else if (TGEMM_OP_A)  // x = mi; rows k, columns m
      e = TileA::offset((j / 2) * 8 + r8, wm0 + x * 16 + (j % 2) * 8);
    else  // x = k-step; rows m, columns k
      e = TileA::offset(wm0 + lane % 16, x * MMA_K + (lane / 16) * CE);
    a_off[x] = unsigned(e) * ELEM_BYTES;
  }
#pragma unroll
  for (int x = 0; x < B_XN; ++x) {
    int e;
    if (kScalarB)  // x = ni; element (k t, n g) at row k, column n
      e = TileB::offset(t, wn0 + x * 8 + g);
    else if (TGEMM_OP_B)  // x = k-step; rows n, columns k
      e = TileB::offset(wn0 + (j / 2) * 8 + r8, x * MMA_K + (j % 2) * CE);
    else  // x = nj; rows k, columns n
      e = TileB::offset((j % 2) * 8 + r8, wn0 + x * 16 + (j / 2) * 8);
    b_off[x] = unsigned(e) * ELEM_BYTES + TileA::kElems * ELEM_BYTES;
  }
  constexpr unsigned kRowA = TileA::kStride * ELEM_BYTES, kRowB = TileB::kStride * ELEM_BYTES;
  static_assert(16 % TileA::kPeriod == 0 && 16 % TileB::kPeriod == 0 && MMA_K % 4 == 0,
                "row moves must be whole swizzle periods");

  // The A fragment of (mi, k-step s) and the B fragments of n16 block nj, from one stage.
  auto load_a = [&](unsigned stage, int mi, int s, unsigned(&af)[4]) {
    if (kScalarA) {  // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        af[e] = ld_shared_u32(stage + a_off[2 * mi + e % 2] + (s * MMA_K + (e / 2) * 4) * kRowA);
    } else if (TGEMM_OP_A) {
      ldmatrix_x4<true>(af, stage + a_off[mi] + s * MMA_K * kRowA);
    } else {
      ldmatrix_x4<false>(af, stage + a_off[s] + mi * 16 * kRowA);
    }
  };
  auto load_b = [&](unsigned stage, int nj, int s, unsigned(&bf)[4]) {
    if (kScalarB) {  // b0 (k t, n g), b1 (k t + 4, n g) of n-tiles 2nj, 2nj + 1
#pragma unroll
      for (int e = 0; e < 4; ++e)
        bf[e] = ld_shared_u32(stage + b_off[2 * nj + e / 2] + (s * MMA_K + (e % 2) * 4) * kRowB);
    } else if (TGEMM_OP_B) {
      ldmatrix_x4<false>(bf, stage + b_off[s] + nj * 16 * kRowB);
    } else {
      ldmatrix_x4<true>(bf, stage + b_off[nj] + s * MMA_K * kRowB);
    }
  };

  // f32 operands as tf32: big parts (and, for f32x3, small parts) of A's fragments, once per
  // k-step, reused across the n tiles; 16-bit fragments go to the mma as loaded.
  auto split_a = [&](unsigned(&af)[MI][4], unsigned(&a_small)[MI][4]) {
#if TGEMM_TYPE_A == 0
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const Split x = split_tf32(af[mi][e]);
        af[mi][e] = x.big;
        a_small[mi][e] = x.small;
      }
#endif
    (void)af;
    (void)a_small;
  };
  // The mma of one k-step on the n16 block nj (n tiles 2nj, 2nj + 1), every mi.
  auto mma_block = [&](const unsigned(&af)[MI][4], const unsigned(&a_small)[MI][4], int nj,
                       const unsigned(&bf)[4]) {
#if TGEMM_TYPE_A != 0
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      mma_16bit(acc[mi][2 * nj], af[mi], bf[0], bf[1]);
      mma_16bit(acc[mi][2 * nj + 1], af[mi], bf[2], bf[3]);
    }
    (void)a_small;
#else
    Split b[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) b[e] = split_tf32(bf[e]);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        float(&d)[4] = acc[mi][2 * nj + h];
        if (TGEMM_COMPUTE == 2) {
          // The tensor cores' f32 sums round toward zero, a bias that grows with K past
          // SGEMM's error: each k-step sums in a fresh accumulator, added in (nearest).
          float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          if (F32X3_TERMS == 3) {  // small terms first: they are tiny
            mma_tf32(part, a_small[mi], b[2 * h].big, b[2 * h + 1].big);
            mma_tf32(part, af[mi], b[2 * h].small, b[2 * h + 1].small);
          }
          mma_tf32(part, af[mi], b[2 * h].big, b[2 * h + 1].big);
#pragma unroll
          for (int e = 0; e < 4; ++e) d[e] += part[e];
        } else {
          mma_tf32(d, af[mi], b[2 * h].big, b[2 * h + 1].big);
        }
      }
#endif
  };

  // A's fragments of one k-step, of every mi: the cp.async pipeline holds two, so the next
  // k-step's loads are in flight while this one's mma issue. B streams one n16 block ahead of
  // its mma within a k-step (holding B ahead as well spills 64x64 warp tiles).
  struct Frags {
    unsigned a[MI][4];
  };
  auto load_frags = [&](unsigned stage, int s, Frags& f) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) load_a(stage, mi, s, f.a[mi]);
  };
  // The register-staged pipeline's slice: one k-step's fragments at a time, B streamed.
  auto compute_slice = [&](unsigned stage) {
#pragma unroll
    for (int s = 0; s < KSTEPS; ++s) {
      unsigned af[MI][4], a_small[MI][4];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) load_a(stage, mi, s, af[mi]);
      split_a(af, a_small);
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {
        unsigned bf[4];
        load_b(stage, nj, s, bf);
        mma_block(af, a_small, nj, bf);
      }
    }
  };
  (void)load_frags;
  (void)compute_slice;

  const unsigned smem0 = smem_address(smem);
  constexpr unsigned kStageBytes = kStageElems * ELEM_BYTES;
#if TGEMM_MMA_ASYNC
  // Prologue: STAGES - 1 slices in flight; one commit group per slice, empty past the end.
  // Not unrolled: two slices' bounded copies at once spill 64x64 warp tiles.
#if TGEMM_MMA_FRAG_DB
#pragma unroll 1
#else
#pragma unroll
#endif
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) copy_slice(smem + s * kStageElems, k_begin + s * BK, false);
    tgemm::cp_async_commit_unordered();
  }
  tgemm::cp_async_wait_unordered<STAGES - 2>();  // slice 0 has landed (this thread's copies)
  __syncthreads();           // ... everyone's
  // Fragments double buffered (CUTLASS's multistage order): k-step s + 1's loads issue before
  // k-step s's mma. On the last k-step, the wait and barrier for the next slice come first,
  // then its first k-step's loads, so the tensor pipe still holds the previous mma across the
  // barrier. Step s uses buffer s % 2; with an odd KSTEPS the next slice's first fragments
  // then land in buffer 1 and move to buffer 0 (16 moves a slice, at BK_BYTES=32 only).
  Frags frag[2];
  int read_stage = 0, write_stage = STAGES - 1;  // kt % STAGES and (kt + STAGES - 1) % STAGES
  auto slice = [&](int kt) {
    // The stage read in slice kt - 1 is free: every warp passed the barrier after its loads.
    const int next = kt + STAGES - 1;
    if (next < k_tiles) copy_slice(smem + write_stage * kStageElems, k_begin + next * BK, true);
    tgemm::cp_async_commit_unordered();
    const unsigned stage = smem0 + read_stage * kStageBytes;
#pragma unroll
    for (int s = 0; s < KSTEPS; ++s) {
      Frags& cur = frag[s % 2];
      Frags& ahead = frag[(s + 1) % 2];
      constexpr int NJ = NI / 2;
      unsigned b[NJ][4];  // B's n16 blocks of this k-step
      const bool last = s == KSTEPS - 1;
      if (last) {
        // This stage is rewritten right after the barrier: every read of it comes first.
#pragma unroll
        for (int nj = 0; nj < NJ; ++nj) load_b(stage, nj, s, b[nj]);
        tgemm::cp_async_wait_unordered<STAGES - 2>();  // slice kt + 1 has landed (this thread's copies)
        __syncthreads();           // ... everyone's; and no warp still reads this stage
        read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
        write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
        if (kt + 1 < k_tiles) load_frags(smem0 + read_stage * kStageBytes, 0, ahead);
      } else {
        load_frags(stage, s + 1, ahead);
      }
      if (!last) load_b(stage, 0, s, b[0]);
      unsigned a_small[MI][4];
      split_a(cur.a, a_small);
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj) {
        if (!last && nj + 1 < NJ) load_b(stage, nj + 1, s, b[nj + 1]);
        mma_block(cur.a, a_small, nj, b[nj]);
      }
    }
  };
  // Up to kt_inside, every slice copied in the loop lies inside A and B (all but the last
  // STAGES - 1 on aligned shapes): they run the double-buffered loop above. The rest, with
  // bounded copies, run one k-step's fragments at a time, as the register-staged pipeline
  // does: both in one loop would spill.
  // Packed operands are zero-padded to whole tiles: every block reads inside them.
  const bool block_inside = PACK || (m0 + BM <= p.m && n0 + BN <= p.n);
  const int full_tiles = (k_end - k_begin) / BK;  // whole BK slices in [k_begin, k_end)
  const int kt_inside = TGEMM_MMA_FRAG_DB && block_inside ? max(0, full_tiles - (STAGES - 1)) : 0;
  if (kt_inside > 0) load_frags(smem0, 0, frag[0]);
  for (int kt = 0; kt < kt_inside; ++kt) {
    slice(kt);
    if (KSTEPS % 2) frag[0] = frag[1];
  }
  for (int kt = kt_inside; kt < k_tiles; ++kt) {
    tgemm::cp_async_wait_unordered<STAGES - 2>();  // slice kt has landed (this thread's copies)
    __syncthreads();           // ... everyone's; and slice kt - 1's stage is no longer read
    const int next = kt + STAGES - 1;
    if (next < k_tiles) copy_slice(smem + write_stage * kStageElems, k_begin + next * BK, false);
    tgemm::cp_async_commit_unordered();
    compute_slice(smem0 + read_stage * kStageBytes);
    read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
  }
#else
  if (k_tiles > 0) {
    copy_slice(smem, k_begin, false);
    copy_a.store(smem);
    copy_b.store(smem + TileA::kElems);
    __syncthreads();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool has_next = kt + 1 < k_tiles;
    // in flight during the mma
    if (has_next) copy_slice(nullptr, k_begin + (kt + 1) * BK, false);
    compute_slice(smem0 + (kt % 2) * kStageBytes);
    if (has_next) {
      // The other stage was last read in iteration kt - 1, which the barrier below closed.
      Bits* const other = smem + ((kt + 1) % 2) * kStageElems;
      copy_a.store(other);
      copy_b.store(other + TileA::kElems);
    }
    __syncthreads();
  }
#endif

  // Epilogue: accumulator e of tile (mi, ni) is C row wm0 + mi*16 + g + 8*(e/2), column
  // wn0 + ni*8 + 2t + e%2.
  const tgemm::GemmParams& pc = tgemm::batch_c<SPLIT_K>(p);  // and its C
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const int row = m0 + wm0 + mi * 16 + g, col = n0 + wn0 + ni * 8 + 2 * t;
#if TGEMM_EPILOGUE
      tgemm::store_output_pair(pc, epilogue, row, col, acc[mi][ni][0], acc[mi][ni][1]);
      tgemm::store_output_pair(pc, epilogue, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
#else
      store_pair(pc, row, col, acc[mi][ni][0], acc[mi][ni][1]);
      store_pair(pc, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
#endif
    }
}
