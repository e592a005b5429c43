// autotrans: memory primitives. Every kernel access to global memory (ldg, stg)
// and shared memory (lds, sts) goes through these, so that the host emulator can
// watch both (smem_hook, gmem_hook); and the store epilogues (epilogue,
// epilogue_at) strided kernels apply to what they store.
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
// 32 and 64 bytes: the wider side of a rows cast's vector (rows.cu), as 16-byte
// words aligned to 16 (not to their size), so that ldg and stg below are two or
// four 16-byte accesses (ld.global.nc.v4.u32, st.global.v4.u32) and need only
// 16-byte alignment; cast_vec (cast.cuh) copies them to element arrays in registers.
template <int N> struct alignas(16) Words16 { uint4 w[N]; };
template <> struct Bytes<32> { typedef Words16<2> T; };
template <> struct Bytes<64> { typedef Words16<4> T; };

// Host emulation only: called on every shared-memory access (byte offset,
// width in bytes, 1 for a store) and on every global one (address, width, 1 for
// a store). The emulator installs them; GPU code never reads them.
inline void (*smem_hook)(uint32_t off, int bytes, int store) = nullptr;
inline void (*gmem_hook)(const void* p, int bytes, int store) = nullptr;

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

// A lane that sits out a global access of its warp's instruction (a false
// predicate; store: 1 for a store): nothing on the GPU. The emulator's sector
// count pairs a warp's lanes by how many accesses each has made, so a lane that
// skips one must still count it (emulate.cu's ghook).
__host__ __device__ __forceinline__ void idle_g(int store) {
#ifndef __CUDA_ARCH__
  if (gmem_hook) gmem_hook(nullptr, 0, store);
#endif
}

template <typename T>
__host__ __device__ __forceinline__ T ldg(const char* p) {  // read-only path: the input never changes
#ifndef __CUDA_ARCH__
  if (gmem_hook) gmem_hook(p, (int)sizeof(T), 0);
#endif
  return *reinterpret_cast<const T*>(p);
}

template <typename T>
__host__ __device__ __forceinline__ void stg(char* p, T v) {
#ifndef __CUDA_ARCH__
  if (gmem_hook) gmem_hook(p, (int)sizeof(T), 1);
#endif
  *reinterpret_cast<T*>(p) = v;
}

// Epilogues (KernelConfig.epilogue): what a strided kernel's store phase does
// to the bytes it writes, as a function of their byte offset from the launch's
// output pointer. CONJ32 flips bit 7 of byte 7 of every 8-byte group (the sign
// of a complex64's imaginary part), CONJ64 bit 7 of byte 15 of every 16-byte
// group (complex128's): integer XORs, so NaNs, infinities and zeros flip as
// NumPy's conj does. epi_group: the group's bytes (KernelConfig.epilogue_group).
enum { EPI_NONE = 0, EPI_CONJ32 = 1, EPI_CONJ64 = 2 };

__host__ __device__ constexpr int epi_group(int epi) { return epi == EPI_CONJ32 ? 8 : epi == EPI_CONJ64 ? 16 : 1; }

// v with bit 7 of its last byte flipped where on (the sign bit of its top word).
__host__ __device__ __forceinline__ uint8_t flip_last(uint8_t v, bool on) { return v ^ (on ? 0x80u : 0u); }
__host__ __device__ __forceinline__ uint16_t flip_last(uint16_t v, bool on) { return v ^ (on ? 0x8000u : 0u); }
__host__ __device__ __forceinline__ uint32_t flip_last(uint32_t v, bool on) { return v ^ (on ? 0x80000000u : 0u); }
__host__ __device__ __forceinline__ uint2 flip_last(uint2 v, bool on) {
  v.y ^= on ? 0x80000000u : 0u;
  return v;
}

// A vector of whole groups (sizeof(T) a multiple of the group, stored at a
// multiple of sizeof(T) from the output pointer) after epilogue EPI: the same
// bits flipped whatever its place.
template <int EPI, typename T>
__host__ __device__ __forceinline__ T epilogue(T v) {
  constexpr int G = epi_group(EPI);
  static_assert(sizeof(T) % G == 0, "at::epilogue takes whole groups: use epilogue_at");
  if constexpr (EPI == EPI_NONE) {
    return v;
  } else if constexpr (sizeof(T) == 8) {   // G == 8
    v.y ^= 0x80000000u;
    return v;
  } else {
    static_assert(sizeof(T) == 16, "a group is 8 or 16 bytes");
    if constexpr (G == 8) v.y ^= 0x80000000u;
    v.w ^= 0x80000000u;
    return v;
  }
}

// A vector stored at byte offset o (a multiple of sizeof(T)) from the output
// pointer after epilogue EPI: one smaller than the group is the group's last
// piece, and has its sign bit flipped, where o % G == G - sizeof(T).
template <int EPI, typename T>
__host__ __device__ __forceinline__ T epilogue_at(T v, uint32_t o) {
  constexpr int G = epi_group(EPI);
  if constexpr (EPI == EPI_NONE || sizeof(T) % G == 0) return epilogue<EPI>(v);
  else return flip_last(v, (o & (G - 1)) == G - sizeof(T));
}

}  // namespace at
