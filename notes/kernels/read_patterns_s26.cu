// Session 26 probe (notes, not product): how the H200 streams the large operand of a 16-row
// GEMV (X: K x N floats, row-major) under the access patterns a GEMV kernel can take, with no
// arithmetic to speak of. Each kernel only reads X and sums what it read.
//   read       grid-stride read of all of X (the S21 probe's ceiling)
//   rows       the shipped gemv_simt loop's pattern: a block owns a strip of 128 floats and KB
//              rows (a K slice), its warps take groups of 4 rows in turn, each lane a float4 of
//              each row; D groups in flight per warp (registers); blocks per SM set by dynamic
//              shared memory; INTERLEAVE: a slice's groups are strided over K (the slices read
//              neighbouring rows at once) instead of KB contiguous rows; HINT: the load's
//              cache qualifiers (0 ld.global.nc, 1 .L2::256B, 2 .L1::no_allocate.L2::256B)
//              FMA: the 16-row GEMV's work added (256 FFMAs a group, W from shared memory)
//   dmma       the same work on FP64 tensor cores (mma.sync m16n8k4 .f64 on exact conversions)
//   tma        a block streams its items (strip x K slice) through a ring of ST stages of
//              2-D tensor-map copies (box SR rows x TLC floats), one producer lane, CW consumer
//              warps that read each box from shared memory (one float4 a lane a row); FMA as
//              for rows
//   box        the same ring, each consumer warp taking whole boxes (one wait a box), FMA
// The tensor map's encoder comes from the runtime's driver entry point: nothing links the
// driver library.
// Interleaved timing, L2 cleaned by a 256 MB read before each run, medians.
// Build: nvcc -O3 -std=c++17 -arch=sm_90a read_patterns_s26.cu -o read_patterns
// Usage: read_patterns K N   (X is K x N)
#include <cuda.h>  // CUtensorMap and the encoder's signature only; the runtime hands the entry
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "probe_common.cuh"

template <int HINT>
__device__ __forceinline__ float4 load4(const float* p) {
  float4 q;
  if (HINT == 0) {
    q = __ldg(reinterpret_cast<const float4*>(p));
  } else if (HINT == 1) {
    asm volatile("ld.global.nc.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "l"(p));
  }
  return q;
}

// acc = 0, and the sum of acc (kept so the compiler cannot drop the work).
template <typename T, int R, int C>
__device__ __forceinline__ void zero(T (&acc)[R][C]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < C; ++c) acc[r][c] = T(0);
}
template <typename T, int R, int C>
__device__ __forceinline__ T sum_of(const T (&acc)[R][C]) {
  T s = T(0);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < C; ++c) s += acc[r][c];
  return s;
}

// The shipped loop's pattern: grid (N / 128, K / KB), WARPS warps a block. FMA: each group's
// 16 values a lane also feed 16 rows of accumulators (256 FFMAs, W broadcast from shared
// memory), as the 16-row GEMV's loop does; at most 128 registers (4 blocks of 4 warps an SM).
template <int WARPS, int D, bool INTERLEAVE, int HINT, bool FMA = false>
__global__ void __launch_bounds__(WARPS * 32, 512 / (WARPS * 32)) rows_read(
    const float* __restrict__ x, int n, int k, int kb, float* out) {
  __shared__ __align__(16) float w[16 * 256];
  for (int i = threadIdx.x; i < 16 * 256; i += blockDim.x) w[i] = 0.001f * (i % 7);
  __syncthreads();
  float acc[16][4];
  zero(acc);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int col = blockIdx.x * 128 + lane * 4;
  const int groups = kb / 4, slices = gridDim.y;
  auto row_of = [&](int g, int j) {  // row j of the slice's g-th group
    return INTERLEAVE ? 4 * (g * slices + int(blockIdx.y)) + j : int(blockIdx.y) * kb + 4 * g + j;
  };
  float4 q[D][4];
  float s = 0.0f;
  const int mine = (groups - warp + WARPS - 1) / WARPS;  // the warp's groups: warp, +WARPS, ...
#pragma unroll
  for (int d = 0; d < D; ++d)
    if (d < mine)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        q[d][j] = load4<HINT>(x + (long long)row_of(warp + d * WARPS, j) * n + col);
  for (int i0 = 0; i0 < mine; i0 += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const int i = i0 + d;
      if (i < mine) {
        if (FMA) {
          const int g = (warp + i * WARPS) % 64;
#pragma unroll
          for (int r = 0; r < 16; ++r) {
            const float4 w4 = *reinterpret_cast<const float4*>(w + r * 256 + 4 * g);
            const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              acc[r][0] = fmaf(wv[j], q[d][j].x, acc[r][0]);
              acc[r][1] = fmaf(wv[j], q[d][j].y, acc[r][1]);
              acc[r][2] = fmaf(wv[j], q[d][j].z, acc[r][2]);
              acc[r][3] = fmaf(wv[j], q[d][j].w, acc[r][3]);
            }
          }
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) s += q[d][j].x + q[d][j].y + q[d][j].z + q[d][j].w;
        }
        if (i + D < mine)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            q[d][j] = load4<HINT>(x + (long long)row_of(warp + (i + D) * WARPS, j) * n + col);
      }
    }
  }
  s += sum_of(acc);
  if (s == -777.0f) *out = s;
}

// The 16-row work on FP64 tensor cores: X and W converted exactly to f64, D (16 x 8 tiles) +=
// W (16 x 4) * X (4 x 8) by mma.sync m16n8k4 (sm_90). A warp owns 64 columns (8 tiles, 32 f64
// accumulators a lane) and takes groups of 4 rows in turn, D groups in flight. A lane reads
// float4s of row k0 + lane % 4 at columns 4 (lane / 4) and 32 + 4 (lane / 4): element e of its
// first float4 is its B value of tile e, of its second of tile 4 + e (columns permuted within
// the warp's 64; an epilogue would undo it). W sits in shared memory as f64, W(s, k) and
// W(s + 8, k) side by side, so a lane's A fragment is one 16-byte read.
template <int WARPS, int D>
__global__ void __launch_bounds__(WARPS * 32, 512 / (WARPS * 32)) rows_dmma(
    const float* __restrict__ x, int n, int k, int kb, float* out) {
  __shared__ __align__(16) double w[256 * 16];  // [k % 256][(s % 8) * 2 + s / 8]
  for (int i = threadIdx.x; i < 256 * 16; i += blockDim.x) w[i] = 0.001 * (i % 7);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int col = blockIdx.x * 64 + 4 * (lane / 4);
  const int groups = kb / 4;
  double acc[8][4];
  zero(acc);
  float4 q[D][2];
  const int mine = (groups - warp + WARPS - 1) / WARPS;
  auto load = [&](int i, float4(&dst)[2]) {
    const float* const row = x + (long long)(blockIdx.y * kb + 4 * (warp + i * WARPS) + lane % 4) * n;
    dst[0] = __ldg(reinterpret_cast<const float4*>(row + col));
    dst[1] = __ldg(reinterpret_cast<const float4*>(row + col + 32));
  };
#pragma unroll
  for (int d = 0; d < D; ++d)
    if (d < mine) load(d, q[d]);
  for (int i0 = 0; i0 < mine; i0 += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const int i = i0 + d;
      if (i < mine) {
        const float b[8] = {q[d][0].x, q[d][0].y, q[d][0].z, q[d][0].w,
                            q[d][1].x, q[d][1].y, q[d][1].z, q[d][1].w};
        const int kk = (4 * (warp + i * WARPS) + lane % 4) % 256;
        const double2 a = *reinterpret_cast<const double2*>(w + kk * 16 + (lane / 4) * 2);
#pragma unroll
        for (int t = 0; t < 8; ++t) {
          const double bt = b[t];
          asm volatile(
              "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
              "{%0,%1,%2,%3};"
              : "+d"(acc[t][0]), "+d"(acc[t][1]), "+d"(acc[t][2]), "+d"(acc[t][3])
              : "d"(a.x), "d"(a.y), "d"(bt));
        }
        if (i + D < mine) load(i + D, q[d]);
      }
    }
  }
  const double s = sum_of(acc);
  if (s == -777.0) *out = float(s);
}

// ---- tensor-map ring -----------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// The ring's barriers: full[s] completes when box s has landed, empty[s] when `consumers`
// warps released it.
template <int ST>
__device__ __forceinline__ void ring_init(uint64_t (&full)[ST], uint64_t (&empty)[ST],
                                          unsigned consumers) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], consumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
}

// The producer lane: the block's `total` boxes into the ring in order, box t from column and row
// at(t) (an int2) of X.
template <int TLC, int SR, int ST, typename At>
__device__ __forceinline__ void ring_produce(const CUtensorMap* map, float* ring,
                                             uint64_t (&full)[ST], uint64_t (&empty)[ST],
                                             int total, At at) {
  for (int t = 0; t < total; ++t) {
    const int s = t % ST;
    if (t >= ST) mbar_wait(&empty[s], ((t / ST) - 1) & 1);
    const int2 where = at(t);
    mbar_expect(&full[s], SR * TLC * 4);
    tma_load_2d(ring + s * SR * TLC, map, where.x, where.y, &full[s]);
  }
}

// Box t of a block that takes items (KB rows x TLC columns, item i = blockIdx.x + i * gridDim.x,
// strip i % strips, slice i / strips) in turn, `boxes` boxes of SR rows an item.
template <int TLC, int SR>
struct ItemBoxes {
  int strips, kb, boxes;
  __device__ int2 operator()(int t) const {
    const int item = int(blockIdx.x) + (t / boxes) * int(gridDim.x);
    return make_int2(item % strips * TLC, item / strips * kb + (t % boxes) * SR);
  }
};

// acc(16 x 4) += W(0..15, k) x the lane's float4 of row k (wr: W(0..15, k) in shared memory).
__device__ __forceinline__ void fma_row(float (&acc)[16][4], float4 q, const float* wr) {
#pragma unroll
  for (int s4 = 0; s4 < 4; ++s4) {
    const float4 w4 = *reinterpret_cast<const float4*>(wr + 4 * s4);
    const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      acc[4 * s4 + i][0] = fmaf(wv[i], q.x, acc[4 * s4 + i][0]);
      acc[4 * s4 + i][1] = fmaf(wv[i], q.y, acc[4 * s4 + i][1]);
      acc[4 * s4 + i][2] = fmaf(wv[i], q.z, acc[4 * s4 + i][2]);
      acc[4 * s4 + i][3] = fmaf(wv[i], q.w, acc[4 * s4 + i][3]);
    }
  }
}

// Items (strip of TLC floats x KB rows), item i = (i % strips, i / strips), taken by the blocks
// in turn; each item's KB / SR boxes through the ring.
// FMA (TLC = 128 only): each row a lane reads also feeds 16 rows of accumulators (64 FFMAs,
// W broadcast from shared memory), as the 16-row GEMV's loop does.
template <int TLC, int SR, int ST, int CW, bool FMA = false>
__global__ void __launch_bounds__((CW + 1) * 32) tma_read(const __grid_constant__ CUtensorMap map,
                                                           int n, int k, int kb, float* out) {
  extern __shared__ __align__(128) float ring[];  // ST boxes of SR x TLC
  __shared__ uint64_t full[ST], empty[ST];
  __shared__ __align__(16) float w[FMA ? 256 * 16 : 4];  // [k % 256][s]
  if (FMA)
    for (int i = threadIdx.x; i < 256 * 16; i += blockDim.x) w[i] = 0.001f * (i % 7);
  float acc[16][4];
  zero(acc);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  ring_init(full, empty, CW);
  const int strips = n / TLC, items = strips * (k / kb), boxes = kb / SR;
  const int mine = (items - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);
  const int total = mine * boxes;  // boxes this block streams
  if (warp == CW) {  // producer
    if (lane == 0)
      ring_produce<TLC, SR, ST>(&map, ring, full, empty, total,
                                ItemBoxes<TLC, SR>{strips, kb, boxes});
    return;
  }
  float sum = 0.0f;
  for (int t = 0; t < total; ++t) {
    const int s = t % ST;
    mbar_wait(&full[s], (t / ST) & 1);
    const float* box = ring + s * SR * TLC;
    for (int r = warp; r < SR; r += CW)
#pragma unroll
      for (int c = lane * 4; c < TLC; c += 128) {
        const float4 q = *reinterpret_cast<const float4*>(box + r * TLC + c);
        if (FMA) {
          fma_row(acc, q, w + ((t * SR + r) % 256) * 16);
        } else {
          sum += q.x + q.y + q.z + q.w;
        }
      }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
  }
  sum += sum_of(acc);
  if (sum == -777.0f) *out = sum;
}

// The ring with whole boxes a consumer: consumer warp w takes boxes w, w + CW, ... (all SR rows
// of each, 128 columns a warp), so it waits once a box and releases it alone; ST is a multiple of
// CW, so box t's slot is always refilled for the same consumer. The 16-row FFMA work as above.
// TRACE: each consumer stamps the time its box t was ready (g_box_ready[block][t], ns).
__device__ unsigned long long g_box_ready[1024 * 256];
__device__ unsigned long long g_block_span[1024 * 2];  // [block][start, end of its last consumer]
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// EARLY: the producer prefetches the tensor map and starts before W is written; the consumers
// write W and meet at a named barrier of their own.
template <int SR, int ST, int CW, bool FMA = true, bool TRACE = false, bool EARLY = false>
__global__ void __launch_bounds__((CW + 1) * 32) tma_box(const __grid_constant__ CUtensorMap map,
                                                          int n, int k, int kb, float* out) {
  static_assert(ST % CW == 0, "a slot serves one consumer");
  constexpr int TLC = 128;
  extern __shared__ __align__(128) float ring[];  // ST boxes of SR x TLC
  __shared__ uint64_t full[ST], empty[ST];
  __shared__ __align__(16) float w[256 * 16];  // [k % 256][s]
  if (TRACE && threadIdx.x == 0) g_block_span[2 * blockIdx.x] = now_ns();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (EARLY && warp == CW && lane == 0) asm volatile("prefetch.tensormap [%0];" ::"l"(&map));
  if (!EARLY)
    for (int i = threadIdx.x; i < 256 * 16; i += blockDim.x) w[i] = 0.001f * (i % 7);
  float acc[16][4];
  zero(acc);
  ring_init(full, empty, 1);
  const int strips = n / TLC, items = strips * (k / kb), boxes = kb / SR;
  const int mine = (items - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);
  const int total = mine * boxes;
  if (warp == CW) {  // producer
    if (lane == 0)
      ring_produce<TLC, SR, ST>(&map, ring, full, empty, total,
                                ItemBoxes<TLC, SR>{strips, kb, boxes});
    return;
  }
  if (EARLY) {
    for (int i = threadIdx.x; i < 256 * 16; i += CW * 32) w[i] = 0.001f * (i % 7);
    asm volatile("bar.sync 1, %0;" ::"r"(CW * 32) : "memory");
  }
  for (int t = warp; t < total; t += CW) {
    const int s = t % ST;
    mbar_wait(&full[s], (t / ST) & 1);
    if (TRACE && lane == 0 && t < 256) g_box_ready[blockIdx.x * 256 + t] = now_ns();
    const float* box = ring + s * SR * TLC + lane * 4;
#pragma unroll 4
    for (int r = 0; r < SR; ++r) {
      const float4 q = *reinterpret_cast<const float4*>(box + r * TLC);
      if (FMA)
        fma_row(acc, q, w + ((t * SR + r) % 256) * 16);
      else
        acc[r % 16][0] += q.x + q.y + q.z + q.w;
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
  }
  const float sum = sum_of(acc);
  if (sum == -777.0f) *out = sum;
  if (TRACE && lane == 0) atomicMax(&g_block_span[2 * blockIdx.x + 1], now_ns());
}

struct Entry {
  std::string label;
  std::function<void()> launch;
  std::vector<float> times;
};

using EncodeTiled = decltype(&cuTensorMapEncodeTiled);

int main(int argc, char** argv) {
  const int k = std::atoi(argv[1]), n = std::atoi(argv[2]);
  float *x, *sink;
  char* flush;
  const size_t flush_bytes = size_t(256) << 20;
  CK(cudaMalloc(&x, size_t(k) * n * 4));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(flush, 0, flush_bytes));
  CK(cudaMemset(x, 0, size_t(k) * n * 4));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
  const EncodeTiled encode = reinterpret_cast<EncodeTiled>(fn);
  auto make_map = [&](int tlc, int sr) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {cuuint64_t(n), cuuint64_t(k)};
    const cuuint64_t strides[1] = {cuuint64_t(n) * 4};
    const cuuint32_t box[2] = {cuuint32_t(tlc), cuuint32_t(sr)};
    const cuuint32_t estr[2] = {1, 1};
    if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, x, dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != 0) {
      std::fprintf(stderr, "encode failed\n");
      std::exit(1);
    }
    return map;
  };
  std::vector<Entry> entries;
  entries.push_back({"read", [=] {
                       read_all<<<sms * 8, 512>>>(reinterpret_cast<const float4*>(x),
                                                  size_t(k) * n / 4, sink);
                     }});
  // rows and dmma: blocks per SM through shared memory (228 KB an SM, 1 KB reserved a block);
  // a block covers `cols` columns (128 for rows, 64 for dmma) and KB rows.
  auto strips = [&](const char* label, auto kernel, int cols, int kb, int per_sm) {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    const int smem = (227 * 1024) / per_sm - 1024 - int(fa.sharedSizeBytes);
    // The most any launch of this kernel asks (one kernel serves several blocks per SM).
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            227 * 1024 - int(fa.sharedSizeBytes)));
    const dim3 grid(n / cols, k / kb);
    char name[96];
    std::snprintf(name, sizeof name, "%s kb%d %d/SM grid%u", label, kb, per_sm, grid.x * grid.y);
    entries.push_back({name, [=] { kernel<<<grid, 4 * 32, smem>>>(x, n, k, kb, sink); }});
  };
  auto rows = [&](const char* label, auto kernel, int kb, int per_sm) {
    strips(label, kernel, 128, kb, per_sm);
  };
  auto dmma = [&](const char* label, auto kernel, int kb, int per_sm) {
    strips(label, kernel, 64, kb, per_sm);
  };
  rows("rows w4 d1", rows_read<4, 1, false, 0>, 256, 4);
  rows("rows w4 d1 fma", rows_read<4, 1, false, 0, true>, 256, 4);
  rows("rows w4 d2 fma", rows_read<4, 2, false, 0, true>, 256, 4);
  rows("rows w4 d2", rows_read<4, 2, false, 0>, 256, 4);
  dmma("dmma w4 d1", rows_dmma<4, 1>, 256, 4);
  dmma("dmma w4 d2", rows_dmma<4, 2>, 256, 4);
  dmma("dmma w4 d1", rows_dmma<4, 1>, 512, 4);
  dmma("dmma w4 d2", rows_dmma<4, 2>, 512, 4);
  dmma("dmma w4 d4", rows_dmma<4, 4>, 512, 4);
  dmma("dmma w4 d2", rows_dmma<4, 2>, 1024, 4);
  dmma("dmma w4 d2", rows_dmma<4, 2>, 256, 3);
  rows("rows w4 d4", rows_read<4, 4, false, 0>, 256, 4);
  rows("rows w4 d1", rows_read<4, 1, false, 0>, 128, 8);
  rows("rows w4 d1", rows_read<4, 1, false, 0>, 64, 16);
  rows("rows w4 d2", rows_read<4, 2, false, 0>, 128, 8);
  rows("rows w4 d1 inter", rows_read<4, 1, true, 0>, 256, 4);
  rows("rows w4 d2 inter", rows_read<4, 2, true, 0>, 256, 4);
  rows("rows w4 d1 L2:256", rows_read<4, 1, false, 1>, 256, 4);
  rows("rows w4 d1 noL1:256", rows_read<4, 1, false, 2>, 256, 4);
  rows("rows w4 d2 noL1:256", rows_read<4, 2, false, 2>, 256, 4);
  // tma: blocks of CW + 1 warps; per_sm blocks an SM, persistent over the items.
  auto tma = [&](const char* label, auto kernel, int tlc, int sr, int st, int cw, int kb,
                 int per_sm) {
    const int smem = st * sr * tlc * 4;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const CUtensorMap map = make_map(tlc, sr);
    const int grid = sms * per_sm;
    char name[96];
    std::snprintf(name, sizeof name, "%s kb%d %d/SM %dKB", label, kb, per_sm, smem / 1024);
    entries.push_back(
        {name, [=] { kernel<<<grid, (cw + 1) * 32, smem>>>(map, n, k, kb, sink); }});
  };
  tma("tma 128x32 st4 cw4", tma_read<128, 32, 4, 4>, 128, 32, 4, 4, 64, 2);
  tma("tma 128x32 st4 cw4 fma", tma_read<128, 32, 4, 4, true>, 128, 32, 4, 4, 64, 2);
  tma("tma 128x32 st4 cw8 fma", tma_read<128, 32, 4, 8, true>, 128, 32, 4, 8, 64, 2);
  tma("tma 128x32 st6 cw8 fma", tma_read<128, 32, 6, 8, true>, 128, 32, 6, 8, 64, 1);
  tma("tma 128x32 st3 cw4 fma", tma_read<128, 32, 3, 4, true>, 128, 32, 3, 4, 64, 3);
  tma("tma 128x16 st8 cw8 fma", tma_read<128, 16, 8, 8, true>, 128, 16, 8, 8, 64, 2);
  tma("tma 128x32 st4 cw16 fma", tma_read<128, 32, 4, 16, true>, 128, 32, 4, 16, 64, 1);
  tma("box 128x16 st8 cw8 fma", tma_box<16, 8, 8>, 128, 16, 8, 8, 64, 2);
  tma("box 128x16 st16 cw8 fma", tma_box<16, 16, 8>, 128, 16, 16, 8, 64, 1);
  tma("box 128x32 st8 cw4 fma", tma_box<32, 8, 4>, 128, 32, 8, 4, 64, 1);
  tma("box 128x16 st8 cw4 fma", tma_box<16, 8, 4>, 128, 16, 8, 4, 64, 2);
  tma("box 128x32 st4 cw4 fma", tma_box<32, 4, 4>, 128, 32, 4, 4, 64, 2);
  tma("box 128x16 st4 cw4 fma", tma_box<16, 4, 4>, 128, 16, 4, 4, 64, 3);
  tma("box early 128x16 st8 cw4 fma", tma_box<16, 8, 4, true, false, true>, 128, 16, 8, 4, 64, 2);
  tma("box early 128x16 st12 cw4 fma", tma_box<16, 12, 4, true, false, true>, 128, 16, 12, 4, 64, 2);
  tma("box early 128x8 st16 cw4 fma", tma_box<8, 16, 4, true, false, true>, 128, 8, 16, 4, 64, 2);
  tma("box early 128x16 st8 cw8 fma", tma_box<16, 8, 8, true, false, true>, 128, 16, 8, 8, 64, 2);
  tma("tma 128x32 st4 cw8", tma_read<128, 32, 4, 8>, 128, 32, 4, 8, 64, 2);
  tma("tma 128x32 st6 cw8", tma_read<128, 32, 6, 8>, 128, 32, 6, 8, 64, 1);
  tma("tma 256x16 st6 cw8", tma_read<256, 16, 6, 8>, 256, 16, 6, 8, 64, 2);
  tma("tma 128x16 st8 cw4", tma_read<128, 16, 8, 4>, 128, 16, 8, 4, 64, 3);
  tma("tma 128x32 st3 cw4", tma_read<128, 32, 3, 4>, 128, 32, 3, 4, 64, 4);
  tma("tma 256x32 st3 cw8", tma_read<256, 32, 3, 8>, 256, 32, 3, 8, 64, 2);

  // PROBE_TRACE: the stream's rate over time, from the boxes' ready stamps of one run each of
  // the whole-box ring with and without its FFMAs (1 us bins, all blocks together).
  if (std::getenv("PROBE_TRACE")) {
    auto trace = [&](const char* label, auto kernel, int sr = 16, int st = 8, int cw = 4) {
      const int smem = st * sr * 128 * 4, grid = sms * 2;
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      const CUtensorMap map = make_map(128, sr);
      std::vector<unsigned long long> stamps(1024 * 256, 0);
      const std::vector<unsigned long long> zeros(1024 * 2, 0);
      for (int rep = 0; rep < 3; ++rep) {  // the last of three runs, L2 cleaned before it
        CK(cudaMemcpyToSymbol(g_box_ready, stamps.data(), stamps.size() * 8));
        CK(cudaMemcpyToSymbol(g_block_span, zeros.data(), zeros.size() * 8));
        read_all<<<sms * 8, 512>>>(reinterpret_cast<const float4*>(flush), flush_bytes / 16, sink);
        kernel<<<grid, (cw + 1) * 32, smem>>>(map, n, k, 64, sink);
        CK(cudaDeviceSynchronize());
      }
      CK(cudaMemcpyFromSymbol(stamps.data(), g_box_ready, stamps.size() * 8));
      std::vector<unsigned long long> span(1024 * 2, 0);
      CK(cudaMemcpyFromSymbol(span.data(), g_block_span, span.size() * 8));
      unsigned long long t0 = ~0ull, t1 = 0, start = ~0ull, last_start = 0, end = 0;
      for (auto v : stamps)
        if (v) t0 = std::min(t0, v), t1 = std::max(t1, v);
      for (int b = 0; b < grid; ++b) {
        start = std::min(start, span[2 * b]);
        last_start = std::max(last_start, span[2 * b]);
        end = std::max(end, span[2 * b + 1]);
      }
      std::printf("trace %s: from the first block's start (us): last block starts %.2f, first box "
                  "ready %.2f, last box ready %.2f, last consumer ends %.2f\n",
                  label, (last_start - start) / 1e3, (t0 - start) / 1e3, (t1 - start) / 1e3,
                  (end - start) / 1e3);
      std::vector<int> bins((t1 - t0) / 1000 + 1, 0);
      for (auto v : stamps)
        if (v) ++bins[(v - t0) / 1000];
      std::printf("trace %s: boxes ready over %.1f us (first to last); TB/s per 1 us bin:\n", label,
                  (t1 - t0) / 1000.0);
      for (size_t b = 0; b < bins.size(); ++b)
        std::printf("  %2zu-%2zu us %5.2f\n", b, b + 1, bins[b] * double(sr) * 128 * 4 / 1e6);
    };
    trace("box 128x16 st8 cw4, no FFMA", tma_box<16, 8, 4, false, true>);
    trace("box 128x16 st8 cw4, FFMA", tma_box<16, 8, 4, true, true>);
    trace("box early 128x16 st8 cw4, FFMA", tma_box<16, 8, 4, true, true, true>);
    trace("box early 128x16 st12 cw4, FFMA", tma_box<16, 12, 4, true, true, true>, 16, 12);
    trace("box early 128x8 st16 cw4, FFMA", tma_box<8, 16, 4, true, true, true>, 8, 16);
    return 0;
  }
  const double bytes = 4.0 * double(k) * n;
  const int rounds = std::getenv("PROBE_ROUNDS") ? std::atoi(std::getenv("PROBE_ROUNDS")) : 60;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int round = 0; round < rounds; ++round)
    for (auto& e : entries) {
      read_all<<<sms * 8, 512>>>(reinterpret_cast<const float4*>(flush), flush_bytes / 16, sink);
      CK(cudaEventRecord(e0));
      e.launch();
      if (cudaPeekAtLastError() != cudaSuccess) std::fprintf(stderr, "launch: %s\n", e.label.c_str());
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (round >= rounds / 6) e.times.push_back(ms * 1000.f);
    }
  std::printf("X %d x %d floats, %.1f MB\n%-44s %9s %9s %9s %7s\n", k, n, bytes / 1e6, "label",
              "median", "min", "p90", "%copy");
  for (auto& e : entries) {
    std::sort(e.times.begin(), e.times.end());
    const float med = e.times[e.times.size() / 2];
    std::printf("%-44s %9.2f %9.2f %9.2f %7.1f\n", e.label.c_str(), med, e.times[0],
                e.times[e.times.size() * 9 / 10], 100.0 * bytes / (med * 1e-6) / 4.26e12);
  }
  return 0;
}
