// Probe (session 21; notes, not product; results in ../results/probe_gemv16_s21.txt, S21-K):
// the 16-row GEMV loop along L with X shared by the block. C (M x N) += A (M x K) B (K x N), row-major, M <= 16, N a multiple of TILE_L, aligned (a
// speed probe: no edges, no beta, atomics into C). Every thread of the block copies 16-byte
// pieces of a stage of 4 * KW rows of the strip into a ring of NST stages (cp.async); a warp
// (rg, kw) then reads its 4 rows of the stage from shared memory and keeps only RPW = ROWS / RW
// rows of sums (RPW * 4 accumulators): fewer registers, so more warps per SM, each X byte read
// from device memory once.
#include <cstdint>

#include "common/async_copy.cuh"
#include "common/gemm_params.h"

#ifndef RW
#define RW 2  // warps that share each K row of a stage, ROWS / RW rows each
#endif
#ifndef KW
#define KW 4  // warps along K: 4 rows of a stage each
#endif
#ifndef NST
#define NST 3
#endif
#ifndef KB
#define KB 256
#endif
#define ROWS 16
#define RPW (ROWS / RW)
#define WARPS (RW * KW)
#define THREADS (32 * WARPS)
#define TILE_L 128           // floats of a row of B per block
#define SROWS (4 * KW)       // K rows per stage
#define STAGE (SROWS * TILE_L)  // floats per stage
#define RED_FIT (4096 / (KW * TILE_L))
#define RED_ROWS (RED_FIT < 1 ? 1 : (RED_FIT > ROWS ? ROWS : RED_FIT))

extern "C" __global__ void __launch_bounds__(THREADS) gemv_simt(const tgemm::GemmParams p) {
  extern __shared__ float4 smem_raw[];
  float* const ws = reinterpret_cast<float*>(smem_raw);  // [ROWS][KB]
  float* const ring = ws + ROWS * KB;                     // [NST][SROWS][TILE_L]
  __shared__ __align__(16) float red[RED_ROWS][KW][TILE_L];
  const float* const x = static_cast<const float*>(p.b);
  const float* const w = static_cast<const float*>(p.a);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int rg = warp % RW, kw = warp / RW;
  const int l0 = blockIdx.x * TILE_L;
  const int k0 = blockIdx.y * KB, k_end = min(p.k, k0 + KB);
  const int stages = (k_end - k0 + SROWS - 1) / SROWS;
  // Stage t's rows into ring slot t % NST: STAGE / 4 pieces of 16 bytes over the block.
  auto copy_stage = [&](int t) {
    float* const slot = ring + (t % NST) * STAGE;
    for (int i = threadIdx.x; i < STAGE / 4; i += THREADS) {
      const int r = i / (TILE_L / 4), c = i % (TILE_L / 4) * 4;
      const int k = k0 + t * SROWS + r;
      tgemm::cp_async_zfill<16>(slot + r * TILE_L + c, k < k_end ? x + (long long)k * p.ldb + l0 + c : x,
                                k < k_end ? 16 : 0);
    }
  };
  for (int i = threadIdx.x; i < ROWS * KB; i += THREADS) {  // W, zero past M and K
    const int s = i / KB, kk = i % KB;
    ws[i] = (s < p.m && k0 + kk < k_end) ? w[(long long)s * p.lda + k0 + kk] : 0.0f;
  }
#pragma unroll
  for (int t = 0; t < NST - 1; ++t) {
    if (t < stages) copy_stage(t);
    tgemm::cp_async_commit();
  }
  float acc[RPW][4];
#pragma unroll
  for (int s = 0; s < RPW; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[s][e] = 0.0f;
  for (int t = 0; t < stages; ++t) {
    tgemm::cp_async_wait<NST - 2>();  // stage t has landed (this thread's pieces)
    __syncthreads();                  // ... every thread's; and slot t-1 is read by all
    if (t + NST - 1 < stages) copy_stage(t + NST - 1);
    tgemm::cp_async_commit();
    const float* const slot = ring + (t % NST) * STAGE;
    float xv[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float4 q = *reinterpret_cast<const float4*>(slot + (kw * 4 + j) * TILE_L + lane * 4);
      xv[j][0] = q.x;
      xv[j][1] = q.y;
      xv[j][2] = q.z;
      xv[j][3] = q.w;
    }
    const int kk = t * SROWS + kw * 4;
#pragma unroll
    for (int s = 0; s < RPW; ++s) {
      const float4 w4 = *reinterpret_cast<const float4*>(ws + (rg * RPW + s) * KB + kk);
      const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[s][e] = fmaf(wv[j], xv[j][e], acc[s][e]);
    }
  }
  tgemm::cp_async_wait<0>();
  // The K warps' sums meet in shared memory, RED_ROWS rows of C at a time; atomics into C.
  for (int s0 = 0; s0 < ROWS; s0 += RED_ROWS) {
    __syncthreads();
#pragma unroll
    for (int sl = 0; sl < RPW; ++sl) {
      const int r = rg * RPW + sl - s0;
      if (r < 0 || r >= RED_ROWS) continue;
#pragma unroll
      for (int e = 0; e < 4; ++e) red[r][kw][lane * 4 + e] = acc[sl][e];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < RED_ROWS * TILE_L / 4; i += THREADS) {
      const int r = i / (TILE_L / 4), col = i % (TILE_L / 4) * 4;
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
      for (int c = 0; c < KW; ++c) {
        const float4 q = *reinterpret_cast<const float4*>(&red[r][c][col]);
        sum.x += q.x;
        sum.y += q.y;
        sum.z += q.z;
        sum.w += q.w;
      }
      if (s0 + r < p.m)
        atomicAdd(reinterpret_cast<float4*>(static_cast<float*>(p.c) + (long long)(s0 + r) * p.ldc +
                                            l0 + col),
                  make_float4(p.alpha * sum.x, p.alpha * sum.y, p.alpha * sum.z, p.alpha * sum.w));
    }
  }
}
