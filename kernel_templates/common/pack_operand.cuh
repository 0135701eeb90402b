// Operand pack pre-pass shared by the templates: copies one operand into the workspace as the
// dense, tile-padded matrix of common/pack_layout.h, from a source of any alignment (a leading
// dimension of 4097 f16 is 2-byte aligned), so the main loop runs 16-byte copies with no
// bounds. Reads are coalesced (each thread the aligned 16-byte words around its 16 bytes, the
// overlap served by L1), writes are 16 bytes per thread; the padding is written as zeros.
#pragma once

#include "common/pack_layout.h"

namespace tgemm {

// 16 bytes of 16-byte aligned global memory through the read-only path.
__device__ __forceinline__ uint4 load_global16(const void* p) {
  uint4 w;
  asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
               : "l"(p));
  return w;
}

// The 16 bytes at src (any byte alignment), of which the first `bytes` (1..16) are read and
// the rest zero: the two aligned words around them, shifted down by src's offset. Only words
// holding a wanted byte are read, so nothing outside the allocation's pages is touched.
__device__ __forceinline__ uint4 load_shifted16(const void* src, int bytes) {
  const unsigned long long addr = reinterpret_cast<unsigned long long>(src);
  const unsigned off = unsigned(addr) & 15u;
  const char* const base = reinterpret_cast<const char*>(addr - off);
  const uint4 w0 = load_global16(base);
  const uint4 w1 = int(off) + bytes > 16 ? load_global16(base + 16) : make_uint4(0, 0, 0, 0);
  unsigned x[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
#pragma unroll
  for (int i = 0; i < 6; ++i) x[i] = (off & 8u) ? x[i + 2] : x[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) x[i] = (off & 4u) ? x[i + 1] : x[i];
  const unsigned shift = (off & 3u) * 8u;
  unsigned o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    asm("shf.r.wrap.b32 %0, %1, %2, %3;\n" : "=r"(o[i]) : "r"(x[i]), "r"(x[i + 1]), "r"(shift));
    if (bytes < 16) {  // zero what lies past the matrix edge
      const int keep = bytes - 4 * i;
      o[i] = keep >= 4 ? o[i] : keep <= 0 ? 0u : o[i] & ((1u << (8 * keep)) - 1u);
    }
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// Copies src (rows x cols elements of ElemBytes, cols contiguous, row stride ld elements)
// into dst laid out as `to` (16-byte aligned), zero past the source's edges. Each 32-bit word
// goes through `word` on the way (identity, or e.g. rounding f32 to tf32). Grid-stride over
// the 16-byte chunks of dst, consecutive threads on consecutive chunks of a row.
template <int ElemBytes, typename WordFn>
__device__ __forceinline__ void pack_operand(const void* src, long long ld, long long rows,
                                             long long cols, void* dst, const PackedLayout& to,
                                             WordFn word) {
  const long long chunks_per_row = to.ld * ElemBytes / 16;
  const long long total = to.rows * chunks_per_row;
  const long long row_bytes = cols * ElemBytes;
  const char* const s = static_cast<const char*>(src);
  uint4* const d = static_cast<uint4*>(dst);
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    const long long r = idx / chunks_per_row, b = (idx % chunks_per_row) * 16;
    long long bytes = r < rows ? row_bytes - b : 0;
    bytes = bytes < 0 ? 0 : bytes > 16 ? 16 : bytes;
    uint4 w = make_uint4(0, 0, 0, 0);
    if (bytes > 0) w = load_shifted16(s + (r * ld * ElemBytes + b), int(bytes));
    d[idx] = make_uint4(word(w.x), word(w.y), word(w.z), word(w.w));
  }
}

// The same for 4-byte elements, transposed: dst[r][c] = src[c][r], so a K-major f32 operand
// becomes K-contiguous. One 32 x 32 tile per block of 32 x 8 threads through shared memory,
// both sides coalesced; blockIdx.x walks dst's columns, blockIdx.y its rows.
template <typename WordFn>
__device__ __forceinline__ void pack_operand_transposed32(const void* src, long long ld,
                                                          long long rows, long long cols, void* dst,
                                                          const PackedLayout& to, WordFn word) {
  __shared__ unsigned tile[32][33];  // +1: the column reads hit 32 banks
  const unsigned* const s = static_cast<const unsigned*>(src);
  unsigned* const d = static_cast<unsigned*>(dst);
  const long long src_r0 = blockIdx.x * 32LL, src_c0 = blockIdx.y * 32LL;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const long long r = src_r0 + ty + j, c = src_c0 + tx;
    tile[ty + j][tx] = r < rows && c < cols ? word(s[r * ld + c]) : 0u;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const long long r = src_c0 + ty + j, c = src_r0 + tx;  // dst row r is src column r
    if (r < to.rows && c < to.ld) d[r * to.ld + c] = tile[tx][ty + j];
  }
}

}  // namespace tgemm
