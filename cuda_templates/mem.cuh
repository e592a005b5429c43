// autotrans: memory primitives. Every kernel access to global memory (ldg, stg)
// and shared memory (lds, sts) goes through these, so that the host emulator can
// watch shared memory through smem_hook.
#pragma once
#include <stdint.h>
#include <stddef.h>

namespace at {

template <int BYTES> struct Bytes;
template <> struct Bytes<1> { typedef uint8_t T; };
template <> struct Bytes<2> { typedef uint16_t T; };
template <> struct Bytes<4> { typedef uint32_t T; };
template <> struct Bytes<8> { typedef uint2 T; };
template <> struct Bytes<16> { typedef uint4 T; };

// Host emulation only: called on every shared-memory access (byte offset,
// width in bytes, 1 for a store). The emulator installs it; GPU code never reads it.
inline void (*smem_hook)(uint32_t off, int bytes, int store) = nullptr;

template <typename T>
__host__ __device__ __forceinline__ T lds(const char* smem, uint32_t off) {
#ifndef __CUDA_ARCH__
  if (smem_hook) smem_hook(off, (int)sizeof(T), 0);
#endif
  return *reinterpret_cast<const T*>(smem + off);
}

template <typename T>
__host__ __device__ __forceinline__ void sts(char* smem, uint32_t off, T v) {
#ifndef __CUDA_ARCH__
  if (smem_hook) smem_hook(off, (int)sizeof(T), 1);
#endif
  *reinterpret_cast<T*>(smem + off) = v;
}

template <typename T>
__host__ __device__ __forceinline__ T ldg(const char* p) {  // read-only path: the input never changes
  return *reinterpret_cast<const T*>(p);
}

template <typename T>
__host__ __device__ __forceinline__ void stg(char* p, T v) {
  *reinterpret_cast<T*>(p) = v;
}

}  // namespace at
