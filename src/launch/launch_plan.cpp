#include "src/launch/launch_plan.h"

#include "src/core/error.h"

namespace tgemm {

void LaunchPlan::add(const KernelLaunch& launch) {
  if (count == kMaxLaunches) fail("a launch plan holds at most {} launches", kMaxLaunches);
  if (count == 0 && launch.early) fail("a plan's first launch cannot start early");
  launches[size_t(count++)] = launch;
}

GemmParams make_params(const Problem& problem, const void* a, const void* b, void* c, float alpha,
                       float beta) {
  GemmParams p{};
  p.a = a;
  p.b = b;
  p.c = c;
  p.lda = problem.lda;
  p.ldb = problem.ldb;
  p.ldc = problem.ldc;
  p.m = int(problem.m);
  p.n = int(problem.n);
  p.k = int(problem.k);
  p.alpha = alpha;
  p.beta = beta;
  p.c_aligned16 = problem.align_c == 16 ? 1 : 0;
  p.stride_a = problem.stride_a;
  p.stride_b = problem.stride_b;
  p.stride_c = problem.stride_c;
  p.batch = int(problem.batch);
  return p;
}

EpilogueParams make_epilogue_params(const GemmCall& call) {
  EpilogueParams e{};
  e.bias = call.bias;
  e.d = call.d ? call.d : call.c;
  e.ldd = call.d ? call.ldd : call.ldc;
  e.aux = call.aux;
  e.ldaux = call.ldaux;
  const int bytes = element_bytes(call.types.c);
  e.d_aligned16 = alignment_bytes(e.ldd, reinterpret_cast<uintptr_t>(e.d), bytes) == 16;
  e.aux_aligned16 =
      call.aux && alignment_bytes(e.ldaux, reinterpret_cast<uintptr_t>(e.aux), bytes) == 16;
  e.scale_a = call.scale_a;
  e.scale_b = call.scale_b;
  return e;
}

}  // namespace tgemm
