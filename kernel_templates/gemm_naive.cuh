// gemm_naive: the first rung of the ladder, one thread per element of C, every element
// type (common/elements.cuh) and layout, f32 accumulation. Slow on purpose: it proves that a
// family plugs in through its three files, and it is the reference-like kernel every type
// has from the start. Row-major storage:
//   C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C
#include "common/batch.cuh"
#include "common/elements.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_params.h"

// ---- Tunables ---------------------------------------------------------------------
#ifndef BLOCK_X
#define BLOCK_X 32  // threads of a block along N (neighbouring columns of C)
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 8  // threads of a block along M
#endif

static_assert(BLOCK_X * BLOCK_Y % 32 == 0, "the block must be whole warps");
static_assert(BLOCK_X * BLOCK_Y <= 1024, "at most 1024 threads per block");

extern "C" __global__ void __launch_bounds__(BLOCK_X* BLOCK_Y)
    gemm_naive(const tgemm::GemmParams batched TGEMM_EPILOGUE_PARAMETER) {
  using namespace tgemm;
  const GemmParams& operands = batch_operands<1>(batched);  // this block's A, B
  const GemmParams& p = batch_c<1>(operands);               // and its C
  // This thread's element of C: row i, column j.
  const int j = blockIdx.x * BLOCK_X + threadIdx.x % BLOCK_X;
  const int i = blockIdx.y * BLOCK_Y + threadIdx.x / BLOCK_X;
  if (i >= p.m || j >= p.n) return;
  const ElementA* const a = static_cast<const ElementA*>(p.a);
  const ElementB* const b = static_cast<const ElementB*>(p.b);
  ElementC* const c = static_cast<ElementC*>(p.c);
  float acc = 0.0f;
  for (int l = 0; l < p.k; ++l) {
    // op(A)[i][l] and op(B)[l][j] as stored (row-major, T layouts transposed).
    const float x = to_f32(TGEMM_OP_A ? a[(long long)l * p.lda + i] : a[(long long)i * p.lda + l]);
    const float y = to_f32(TGEMM_OP_B ? b[(long long)j * p.ldb + l] : b[(long long)l * p.ldb + j]);
    acc = fmaf(x, y, acc);
  }
#if TGEMM_EPILOGUE
  return store_output(p, epilogue, i, j, acc);
#endif
  ElementC* const out = c + (long long)i * p.ldc + j;
  const float old = p.beta != 0.0f ? p.beta * to_f32(*out) : 0.0f;
  *out = from_f32<ElementC>(p.alpha * acc + old);
}
