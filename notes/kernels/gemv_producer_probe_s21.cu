// Probe (session 21; notes, not product): the 16-row GEMV loop along L with a producer warp.
// Built as gemv_probe_s21.cu's cubins are (nvcc -cubin -arch=sm_90 -I kernel_templates
// -DCONS=8 -DCWT=4 -DNST=4 -DKB=128 gemv_producer_probe_s21.cu); results in
// ../results/probe_gemv16_s21.txt (S21-G, S21-H). C (M x N) += A (M x K)
// B (K x N), row-major, M <= 16, N a multiple of TILE_L, aligned (a speed probe: no edges, no
// beta, atomics into C). One lane of the producer warp issues a bulk copy (cp.async.bulk, sm_90)
// per K row of the block's strip into a ring of NST stages of 4 * CONS rows; CONS consumer warps
// each take 4 rows of a stage, as the shipped loop takes a K group, and release the stage.
#include <cstdint>

#include "common/gemm_params.h"

#ifndef CONS
#define CONS 8
#endif
#ifndef NST
#define NST 4
#endif
#ifndef KB
#define KB 512
#endif
#define ROWS 16
#ifndef CWT
#define CWT 1  // consumer warps side by side along N (512 bytes of a row each)
#endif
#define KW (CONS / CWT)  // consumer warps along K
#define TILE_L (128 * CWT)  // floats of a row of B per block: one bulk copy
#define RPS (4 * KW)  // K rows per stage
#define THREADS (32 * (CONS + 1))
#define RED_FIT (8192 / (KW * TILE_L))
#define RED_ROWS (RED_FIT < 1 ? 1 : (RED_FIT > ROWS ? ROWS : RED_FIT))

__device__ __forceinline__ unsigned saddr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(saddr(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* b, unsigned bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(
                   saddr(b)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* b) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(saddr(b))
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* b, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra "
      "WAIT_%=;\n}\n" ::"r"(saddr(b)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* b) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          saddr(dst)),
      "l"(src), "r"(bytes), "r"(saddr(b))
      : "memory");
}

extern "C" __global__ void __launch_bounds__(THREADS) gemv_simt(const tgemm::GemmParams p) {
  extern __shared__ float4 smem_raw[];
  float* const ws = reinterpret_cast<float*>(smem_raw);  // [ROWS][KB]
  float* const ring = ws + ROWS * KB;                     // [NST][RPS][TILE_L]
  __shared__ __align__(8) uint64_t full[NST], empty[NST];
  __shared__ __align__(16) float red[RED_ROWS][KW][TILE_L];
  const float* const x = static_cast<const float*>(p.b);
  const float* const w = static_cast<const float*>(p.a);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int cw = warp % CWT, kw = warp / CWT;  // a consumer's column quarter and K rows
  const int l0 = blockIdx.x * TILE_L;
  const int k0 = blockIdx.y * KB, k_end = min(p.k, k0 + KB);
  const int stages = (k_end - k0 + RPS - 1) / RPS;
  if (threadIdx.x == 0) {
    for (int s = 0; s < NST; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], CONS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  for (int i = threadIdx.x; i < ROWS * KB; i += THREADS) {  // W, zero past M and K
    const int s = i / KB, kk = i % KB;
    ws[i] = (s < p.m && k0 + kk < k_end) ? w[(long long)s * p.lda + k0 + kk] : 0.0f;
  }
  __syncthreads();
  float acc[ROWS][4];
#pragma unroll
  for (int s = 0; s < ROWS; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[s][e] = 0.0f;
  if (warp == CONS) {  // the producer
    if (lane == 0) {
      for (int t = 0; t < stages; ++t) {
        const int slot = t % NST;
        if (t >= NST) mbar_wait(&empty[slot], ((t / NST) - 1) & 1);
        const int first = k0 + t * RPS, rows = min(RPS, k_end - first);
        mbar_expect_tx(&full[slot], unsigned(rows * TILE_L * 4));
        for (int r = 0; r < rows; ++r)
          bulk_copy(ring + (slot * RPS + r) * TILE_L, x + (long long)(first + r) * p.ldb + l0,
                    TILE_L * 4, &full[slot]);
      }
    }
  } else {
    for (int t = 0; t < stages; ++t) {
      const int slot = t % NST;
      mbar_wait(&full[slot], (t / NST) & 1);
      const int first = t * RPS + kw * 4;  // this warp's 4 rows, from k0
      float xv[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float4 q = k0 + first + j < k_end
                             ? *reinterpret_cast<const float4*>(
                                   ring + (slot * RPS + kw * 4 + j) * TILE_L + cw * 128 + lane * 4)
                             : make_float4(0.f, 0.f, 0.f, 0.f);
        xv[j][0] = q.x;
        xv[j][1] = q.y;
        xv[j][2] = q.z;
        xv[j][3] = q.w;
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[slot]);
#pragma unroll
      for (int s = 0; s < ROWS; ++s) {
        const float4 w4 = *reinterpret_cast<const float4*>(ws + s * KB + first);
        const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[s][e] = fmaf(wv[j], xv[j][e], acc[s][e]);
      }
    }
  }
  // The consumers' sums meet in shared memory, RED_ROWS rows at a time; atomics into C.
#pragma unroll
  for (int s0 = 0; s0 < ROWS; s0 += RED_ROWS) {
    if (warp < CONS) {
#pragma unroll
      for (int r = 0; r < RED_ROWS; ++r)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          red[r][kw][cw * 128 + lane * 4 + e] = acc[min(s0 + r, ROWS - 1)][e];
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
    __syncthreads();
  }
}
