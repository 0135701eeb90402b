// cp.async (sm_80+): global-to-shared copies that do not pass through registers, so a thread
// can keep several loads in flight at no register cost. Bytes past `src_bytes` of a copy are
// zero-filled.
#pragma once

namespace tgemm {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes through L2 only (.cg: streamed data gains nothing from L1).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)), "l"(src)
               : "memory");
}

// BYTES (4, 8 or 16) of which the first src_bytes are read, the rest zero.
template <int BYTES>
__device__ __forceinline__ void cp_async_zfill(void* dst, const void* src, int src_bytes) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared_address(dst)),
               "l"(src), "n"(BYTES), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// The copies above order every memory access around them (the "memory" clobber). Those below
// leave the compiler free to move other accesses across them: for families that read their
// shared tiles only after a __syncthreads (itself a barrier to the compiler), whose schedules
// were tuned with that freedom. They take shared byte addresses (shared_address) and compile to
// nothing below sm_80.

// BYTES (4, 8 or 16) of which the first src_bytes are read, the rest zero; 16 through L2 only.
template <int BYTES>
__device__ __forceinline__ void cp_async_unordered(unsigned dst, const void* src, int src_bytes) {
#if __CUDA_ARCH__ >= 800
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(BYTES),
                 "r"(src_bytes));
#endif
}

// BYTES, all read: the copy without a source size.
template <int BYTES>
__device__ __forceinline__ void cp_async_whole_unordered(unsigned dst, const void* src) {
#if __CUDA_ARCH__ >= 800
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(BYTES));
#endif
}

// BYTES, or zeros when `read` is false (src is then not read): one predicated copy.
template <int BYTES>
__device__ __forceinline__ void cp_async_or_zero_unordered(unsigned dst, const void* src,
                                                           bool read) {
#if __CUDA_ARCH__ >= 800
  if (BYTES == 16)
    asm volatile(
        "{ .reg .pred z; setp.eq.u32 z, %2, 0; cp.async.cg.shared.global [%0], [%1], 16, z; }\n" ::
            "r"(dst),
        "l"(src), "r"(int(read)));
  else
    asm volatile(
        "{ .reg .pred z; setp.eq.u32 z, %3, 0; cp.async.ca.shared.global [%0], [%1], %2, z; }\n" ::
            "r"(dst),
        "l"(src), "n"(BYTES), "r"(int(read)));
#endif
}

__device__ __forceinline__ void cp_async_commit_unordered() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_unordered() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

}  // namespace tgemm
