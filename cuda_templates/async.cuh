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

__host__ __device__ __forceinline__ void cp_async_wait() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace at
