// Bulk tensor stores (TMA, sm_90): a box of shared memory written to a 2-D tensor in global
// memory by the copy engine, asynchronously, while the threads that filled it go on. Threads
// write the box with ordinary stores, make them visible to the copy engine (fence), meet at a
// barrier, and one thread issues the store; the box may be overwritten once the store has read
// it (wait_group.read). Parts of a box outside the tensor are not written.
#pragma once

namespace tgemm {

// Orders this thread's earlier shared-memory writes before later bulk copies read them.
__device__ __forceinline__ void fence_shared_for_copies() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The box at `src` to the tensor of `map` at element coordinates (inner, outer); its group is
// closed by tensor_store_commit.
__device__ __forceinline__ void tensor_store_2d(const void* map, int inner, int outer,
                                                unsigned src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map),
      "r"(inner), "r"(outer), "r"(src)
      : "memory");
}
__device__ __forceinline__ void tensor_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Until every committed store of this thread has read its shared memory (it may be reused).
__device__ __forceinline__ void tensor_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// Until every committed store of this thread is complete (before the block exits).
__device__ __forceinline__ void tensor_stores_done() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// Shared-memory stores of 4 and 8 bytes at a 32-bit shared address.
__device__ __forceinline__ void shared_store(unsigned addr, unsigned v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void shared_store(unsigned addr, float v0, float v1) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(v0), "f"(v1) : "memory");
}

}  // namespace tgemm
