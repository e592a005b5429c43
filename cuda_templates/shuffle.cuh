// autotrans: byte shuffles of vectors held in registers (word, pack, perm,
// funnel, shift_bytes, word_at, gather) and lds_span, a shared-memory read at
// any element alignment built on them. Indices are compile-time constants after
// unrolling, so these are register moves and selects: no local memory.
#pragma once
#include "mem.cuh"

namespace at {

// 32-bit word i of a vector held in registers.
__host__ __device__ __forceinline__ uint32_t word(uint32_t v, int) { return v; }
__host__ __device__ __forceinline__ uint32_t word(uint2 v, int i) { return i == 0 ? v.x : v.y; }
__host__ __device__ __forceinline__ uint32_t word(uint4 v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// A vector from 32-bit words.
template <typename T> __host__ __device__ __forceinline__ T pack(const uint32_t* o);
template <> __host__ __device__ __forceinline__ uint32_t pack<uint32_t>(const uint32_t* o) { return o[0]; }
template <> __host__ __device__ __forceinline__ uint2 pack<uint2>(const uint32_t* o) {
  return make_uint2(o[0], o[1]);
}
template <> __host__ __device__ __forceinline__ uint4 pack<uint4>(const uint32_t* o) {
  return make_uint4(o[0], o[1], o[2], o[3]);
}
// 32 and 64 bytes (mem.cuh's Words16): the input side of a shift tile's narrowing cast.
template <> __host__ __device__ __forceinline__ Words16<2> pack<Words16<2>>(const uint32_t* o) {
  return Words16<2>{{pack<uint4>(o), pack<uint4>(o + 4)}};
}
template <> __host__ __device__ __forceinline__ Words16<4> pack<Words16<4>>(const uint32_t* o) {
  return Words16<4>{{pack<uint4>(o), pack<uint4>(o + 4), pack<uint4>(o + 8), pack<uint4>(o + 12)}};
}

// __byte_perm on the device; the same byte selection on the host.
__host__ __device__ __forceinline__ uint32_t perm(uint32_t a, uint32_t b, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(a, b, s);
#else
  uint64_t x = ((uint64_t)b << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= (uint32_t)((x >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
#endif
}

// Low 32 bits of (hi:lo) >> sh, 0 <= sh < 32.
__host__ __device__ __forceinline__ uint32_t funnel(uint32_t lo, uint32_t hi, uint32_t sh) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, sh);
#else
  return (uint32_t)((((uint64_t)hi << 32) | lo) >> sh);
#endif
}

// Bytes [s, s + sizeof(T)) of the little-endian concatenation lo ++ hi, for
// 0 <= s < sizeof(T): whole words by selects, then the byte rest by funnel shifts.
template <typename T>
__host__ __device__ __forceinline__ T shift_bytes(T lo, T hi, uint32_t s) {
  constexpr int n = sizeof(T) / 4;
  uint32_t x[2 * n], o[n], q = s / 4;
#pragma unroll
  for (int j = 0; j < n; ++j) x[j] = word(lo, j), x[n + j] = word(hi, j);
#pragma unroll
  for (int b = n / 2; b >= 1; b /= 2)
#pragma unroll
    for (int j = 0; j + b < 2 * n; ++j) x[j] = (q & b) ? x[j + b] : x[j];
#pragma unroll
  for (int j = 0; j < n; ++j) o[j] = funnel(x[j], x[j + 1], 8 * (s & 3));
  return pack<T>(o);
}

// Word i (a run-time index) of a vector in registers, by selects.
template <typename T>
__host__ __device__ __forceinline__ uint32_t word_at(T v, uint32_t i) {
  uint32_t r = word(v, 0);
#pragma unroll
  for (int j = 1; j < (int)(sizeof(T) / 4); ++j) r = i == (uint32_t)j ? word(v, j) : r;
  return r;
}

// Column e of R vectors (rows) in registers, packed into R * E / 4 words: the
// R elements of that column, in row order (__byte_perm for 1- and 2-byte elements).
template <int E, int R, typename T>
__host__ __device__ __forceinline__ void gather(const T (&w)[R], int e, uint32_t (&o)[R * E / 4]) {
  if constexpr (E >= 4) {
#pragma unroll
    for (int q = 0; q < R; ++q)
#pragma unroll
      for (int j = 0; j < E / 4; ++j) o[q * (E / 4) + j] = word(w[q], e * (E / 4) + j);
  } else if constexpr (E == 2) {
#pragma unroll
    for (int j = 0; j < R / 2; ++j)
      o[j] = perm(word(w[2 * j], e / 2), word(w[2 * j + 1], e / 2), (e & 1) ? 0x7632 : 0x5410);
  } else {
    const uint32_t sel = (e & 3) | ((4 + (e & 3)) << 4);
#pragma unroll
    for (int j = 0; j < R / 4; ++j)
      o[j] = perm(perm(word(w[4 * j], e / 4), word(w[4 * j + 1], e / 4), sel),
                  perm(word(w[4 * j + 2], e / 4), word(w[4 * j + 3], e / 4), sel), 0x5410);
  }
}

// sizeof(T) bytes of shared memory from byte offset off, a multiple of A: whole
// words where A >= 4, else the words covering them and funnel shifts.
template <typename T, int A>
__host__ __device__ __forceinline__ T lds_span(const char* smem, uint32_t off) {
  constexpr int n = sizeof(T) / 4;
  uint32_t o[n];
  if constexpr (A >= 4) {
#pragma unroll
    for (int j = 0; j < n; ++j) o[j] = lds<uint32_t>(smem, off + 4 * j);
  } else {
    uint32_t x[n + 1], base = off & ~3u, sh = 8 * (off & 3);
#pragma unroll
    for (int j = 0; j <= n; ++j) x[j] = lds<uint32_t>(smem, base + 4 * j);
#pragma unroll
    for (int j = 0; j < n; ++j) o[j] = funnel(x[j], x[j + 1], sh);
  }
  return pack<T>(o);
}

}  // namespace at
