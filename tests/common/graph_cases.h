// One problem per family and per kind of launch plan the dispatcher serves (split-K by atomics
// and by a workspace, packs into the workspace, arrival counters kept in the module, a
// persistent grid reading tensor maps), each with the config a dispatcher is made to serve it
// by: the cases the CUDA graph tests capture. A CPU test checks that every case is one its
// family computes on sm_90, so that none is skipped on the GPUs the tests run on.
#pragma once

#include <string>
#include <vector>

#include "src/core/dtype.h"
#include "src/core/problem.h"
#include "src/dispatch/kernel_selector.h"

namespace tgemm::testing {

struct GraphCase {
  // A configs/default_kernels.txt line (the configs mostly come from the shipped table).
  std::string line;
  Op op_a, op_b;
  int m, n, k;
  int offset;  // elements each pointer sits past cudaMalloc's alignment (0: 256-byte aligned)
  // The line as a default kernel served on any arch (an sm_90 line would be ignored elsewhere;
  // the family's own checks still refuse what the GPU cannot run).
  DefaultKernel kernel() const {
    DefaultKernel parsed = parse_default_kernels(line).at(0);
    parsed.arch = "*";
    return parsed;
  }
  // The packed problem, its alignment that of pointers `offset` elements past 256 bytes.
  Problem problem(bool beta_zero = false) const {
    Problem p = Problem::packed(kernel().types, op_a, op_b, m, n, k);
    p.beta_zero = beta_zero;
    p.align_a = alignment_bytes(p.lda, uintptr_t(offset * element_bytes(p.types.a)),
                                element_bytes(p.types.a));
    p.align_b = alignment_bytes(p.ldb, uintptr_t(offset * element_bytes(p.types.b)),
                                element_bytes(p.types.b));
    p.align_c = alignment_bytes(p.ldc, uintptr_t(offset * element_bytes(p.types.c)),
                                element_bytes(p.types.c));
    return p;
  }
};

inline std::vector<GraphCase> graph_cases() {
  return {
      {"* f32 sgemm_simt BM=64,BN=64,BK=16,TM=4,TN=4,WARP_N=8,VEC=4,PAD_A=4,PAD_B=4,STAGES=2,"
       "SPLIT_K=1,SPLIT_MODE=0,SWIZZLE=1,MIN_BLOCKS=1",
       Op::N, Op::N, 256, 192, 128, 0},
      // Split-K summed in a workspace in a fixed order (a second launch).
      {"* f32 sgemm_simt BM=64,BN=64,BK=16,TM=4,TN=4,WARP_N=8,VEC=1,PAD_A=4,PAD_B=4,STAGES=2,"
       "SPLIT_K=16,SPLIT_MODE=1,SWIZZLE=1,MIN_BLOCKS=1",
       Op::N, Op::T, 64, 64, 4096, 1},
      // Split-K by atomics (a C-scaling pre-pass).
      {"* f32 sgemm_simt BM=64,BN=64,BK=16,TM=4,TN=4,WARP_N=8,VEC=4,PAD_A=4,PAD_B=4,STAGES=2,"
       "SPLIT_K=16,SPLIT_MODE=0,SWIZZLE=1,MIN_BLOCKS=1",
       Op::T, Op::N, 96, 80, 2048, 0},
      // B packed into the workspace; tail tiles split with arrival counters.
      {"* f32 sgemm_warp BM=128,BN=256,BK=8,WM=64,WN=64,TM=16,TN=8,STAGES=4,VEC=4,SPLIT_K=1,"
       "TAIL_SPLIT=1,SWIZZLE=8,MIN_BLOCKS=1,PACK_B=1",
       Op::N, Op::T, 256, 256, 64, 0},
      {"* f32 sgemm_warp BM=64,BN=128,BK=16,WM=64,WN=32,TM=16,TN=4,STAGES=4,VEC=1,SPLIT_K=1,"
       "TAIL_SPLIT=1,SWIZZLE=8,MIN_BLOCKS=1,PACK_B=0",
       Op::T, Op::T, 130, 250, 96, 1},
      // One-row GEMV whose last block of a strip adds the K slices (counters and workspace).
      {"* f32 gemv_simt SIDE=0,ROWS=1,VEC=4,WARPS=8,KB=256,LW=4,SPLIT_MODE=2,PREFETCH=1,"
       "STAGES=0,KLANES=8,CLUSTER=1",
       Op::N, Op::T, 1, 512, 4096, 0},
      {"* tf32 gemv_mma SIDE=1,WARPS=4,LW=1,KB=256", Op::N, Op::N, 512, 8, 1024, 0},
      {"* bf16 gemm_naive BLOCK_X=32,BLOCK_Y=8", Op::T, Op::N, 70, 50, 30, 0},
      {"* f16 gemm_mma BM=64,BN=64,BK_BYTES=64,WM=32,WN=32,STAGES=3,VEC_BYTES=16,SMEM_XOR=1,"
       "SPLIT_K=1,SWIZZLE=1,SHIFT_COPY=0,PACK=0",
       Op::N, Op::T, 192, 128, 256, 0},
      // Misaligned operands packed into the workspace first.
      {"* bf16 gemm_mma BM=64,BN=64,BK_BYTES=128,WM=32,WN=32,STAGES=3,VEC_BYTES=16,SMEM_XOR=1,"
       "SPLIT_K=1,SWIZZLE=8,SHIFT_COPY=0,PACK=1",
       Op::N, Op::N, 130, 66, 200, 1},
      {"* f16_out_f32 gemm_mma BM=64,BN=64,BK_BYTES=64,WM=32,WN=32,STAGES=3,VEC_BYTES=16,"
       "SMEM_XOR=1,SPLIT_K=4,SWIZZLE=1,SHIFT_COPY=0,PACK=0",
       Op::N, Op::N, 128, 128, 2048, 0},
      {"* tf32 gemm_mma BM=64,BN=64,BK_BYTES=128,WM=32,WN=32,STAGES=4,VEC_BYTES=16,SMEM_XOR=1,"
       "SPLIT_K=16,SWIZZLE=1,SHIFT_COPY=0,PACK=0",
       Op::N, Op::N, 64, 128, 4096, 0},
      {"* tf32 gemm_mma BM=128,BN=128,BK_BYTES=64,WM=64,WN=64,STAGES=4,VEC_BYTES=16,SMEM_XOR=1,"
       "SPLIT_K=1,SWIZZLE=8,SHIFT_COPY=0,PACK=1",
       Op::N, Op::T, 256, 128, 128, 0},
      {"* f32x3 gemm_mma BM=64,BN=64,BK_BYTES=64,WM=32,WN=32,STAGES=4,VEC_BYTES=16,SMEM_XOR=1,"
       "SPLIT_K=1,SWIZZLE=8,SHIFT_COPY=0,PACK=2",
       Op::N, Op::N, 128, 128, 256, 0},
      {"sm_90 f16 gemm_wgmma BM=64,BN=64,WGS=1,STAGES=5,SWIZZLE=1,PACK=0,SPLIT_K=1", Op::N, Op::T,
       192, 192, 256, 0},
      {"sm_90 bf16 gemm_wgmma BM=64,BN=64,WGS=1,STAGES=5,SWIZZLE=1,PACK=1,SPLIT_K=1", Op::N, Op::N,
       130, 100, 200, 1},
      {"sm_90 tf32 gemm_wgmma BM=64,BN=128,WGS=1,STAGES=5,SWIZZLE=8,PACK=2,SPLIT_K=1", Op::N, Op::N,
       128, 256, 256, 0},
      // A persistent grid reading tensor maps; then split-K reduced from the workspace.
      {"sm_90 f16 gemm_tma_wgmma BM=128,BN=128,CONSUMERS=2,STAGES=6,SWIZZLE=8,SPLIT_K=1,CLUSTER=1",
       Op::N, Op::T, 256, 256, 256, 0},
      {"sm_90 bf16_out_f32 gemm_tma_wgmma BM=128,BN=128,CONSUMERS=2,STAGES=6,SWIZZLE=1,SPLIT_K=4,"
       "CLUSTER=1",
       Op::N, Op::T, 128, 128, 4096, 0},
      {"sm_90 tf32 gemm_tma_wgmma BM=128,BN=128,CONSUMERS=2,STAGES=6,SWIZZLE=8,SPLIT_K=1,CLUSTER=1",
       Op::N, Op::T, 256, 128, 256, 0},
      // Clusters sharing B's tiles, C leaving by tensor stores (a third map, for C).
      {"sm_90 bf16 gemm_tma_wgmma BM=128,BN=256,CONSUMERS=2,STAGES=4,SWIZZLE=8,SPLIT_K=1,CLUSTER=2,"
       "CLUSTER_N=1,TMA_STORE=1",
       Op::N, Op::N, 512, 512, 256, 0},
  };
}

}  // namespace tgemm::testing
