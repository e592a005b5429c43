// autotrans: asynchronous global -> shared copies (cp.async, sm_80 and later);
// on the host, a plain copy through the memory primitives.
#pragma once
#include "mem.cuh"

namespace at {

// 16 bytes from global p (16-byte aligned) to shared memory at byte offset off,
// asynchronously (cp.async: no registers held while the load is in flight);
// cp_async_wait waits for this thread's copies.
__host__ __device__ __forceinline__ void cp_async16(char* smem, uint32_t off, const char* p) {
#ifdef __CUDA_ARCH__
  uint32_t dst = (uint32_t)__cvta_generic_to_shared(smem + off);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(p) : "memory");
#else
  sts<uint4>(smem, off, ldg<uint4>(p));
#endif
}

// N bytes (4, 8 or 16) from global p (N-byte aligned) to shared memory at byte
// offset off (N-byte aligned), asynchronously: 16 bytes as cp_async16, 4 and 8
// through L1 (cp.async.ca: the only form of those sizes).
template <int N>
__host__ __device__ __forceinline__ void cp_async(char* smem, uint32_t off, const char* p) {
  static_assert(N == 4 || N == 8 || N == 16, "cp.async copies 4, 8 or 16 bytes");
#ifdef __CUDA_ARCH__
  if constexpr (N == 16) {
    cp_async16(smem, off, p);
  } else {
    uint32_t dst = (uint32_t)__cvta_generic_to_shared(smem + off);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(p), "n"(N) : "memory");
  }
#else
  typedef typename Bytes<N>::T T;
  sts<T>(smem, off, ldg<T>(p));
#endif
}

__host__ __device__ __forceinline__ void cp_async_wait() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace at
