// Shared-memory transaction barriers (mbarrier, sm_90) and the bulk tensor copies (TMA) that
// complete on them: the producer/consumer ring of the warp-specialized families. A slot's
// "full" barrier counts the producer's one arrival plus the bytes its copies deliver; its
// "empty" barrier counts the consumer warps that finished reading it. Waits name the phase
// parity they wait for: a fresh barrier is in phase 0, so waiting for parity 1 passes at once
// (an empty slot needs no release before its first fill).
#pragma once

#include "common/async_copy.cuh"  // shared_address

namespace tgemm {

__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}
// Makes the initialised barriers visible to the copy engine and the other threads (followed
// by a block barrier).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` of copies the phase must receive before it completes.
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival on the barrier at `bar` (this block's address) in block `rank` of the cluster
// (this block's own included). It releases at block scope only: what it announces, a slot the
// arriving warp's wgmmas have finished reading (wgmma.wait_group), needs no ordering of this
// thread's memory accesses towards the other block, and a cluster-scope release would wait
// for its earlier global stores (the last tile's epilogue) on every slot it frees.
__device__ __forceinline__ void mbarrier_arrive_in(unsigned bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
__device__ __forceinline__ bool mbarrier_try_wait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// Brings a __grid_constant__ tensor map into the copy engine's cache before its first use.
__device__ __forceinline__ void tensor_map_prefetch(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}
// The box of a 2-D tensor map at element coordinates (inner, outer) into shared memory at
// `dst`, completing `bar`'s transaction bytes. Elements outside the tensor arrive as zeros.
__device__ __forceinline__ void tensor_copy_2d(unsigned dst, const void* map, int inner, int outer,
                                               unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(map), "r"(inner), "r"(outer), "r"(bar)
      : "memory");
}

// The same box into shared memory at `dst` of every block of the cluster in `blocks` (a bit
// per rank), completing the barrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tensor_copy_2d_multicast(unsigned dst, const void* map, int inner,
                                                         int outer, unsigned bar,
                                                         unsigned short blocks) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(map), "r"(inner), "r"(outer), "r"(bar), "h"(blocks)
      : "memory");
}

// Register budgets of a warp-specialized block (sm_90a): a producer warpgroup that only issues
// copies gives registers back, its consumer warpgroups take them. Every warp of the warpgroup
// executes it, with the kernel's register count capped at entry (__launch_bounds__(threads, 1)).
template <int Registers>
__device__ __forceinline__ void registers_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void registers_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

}  // namespace tgemm
