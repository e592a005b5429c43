// autotrans: helpers shared by every kernel template.
//
// Everything a kernel does to memory goes through the functions here, and the
// kernels' index math lives in __host__ __device__ functions. The same code
// therefore runs on the GPU and, compiled for the host, in the emulator that
// the CPU tests use to check indexing and to count shared-memory bank conflicts.
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
__host__ __device__ __forceinline__ T ldg(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

template <typename T>
__host__ __device__ __forceinline__ void stg(char* p, T v) {
  *reinterpret_cast<T*>(p) = v;
}

// 32-bit word i of a vector held in registers (i is a compile-time constant
// after unrolling, so these are register moves: no local memory).
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

// One tile of a B x M x N row-major input, and where it lands in the
// B x N x M output. Offsets are 64-bit: M*N*elem may pass 2^31.
struct Tile {
  const char* in;    // first input byte of the tile
  char* out;         // first output byte of the tile
  long long ldi;     // input row pitch, bytes (N * E)
  long long ldo;     // output row pitch, bytes (M * E)
  int rows, cols;    // valid input rows / columns in this tile
};

enum { ORDER_ROW = 0, ORDER_COL = 1, ORDER_DIAG = 2 };

// Blocks walk tiles batch outermost; within a matrix in row-major order
// (consecutive blocks read along input rows), column-major order (consecutive
// blocks write along output rows) or diagonally.
template <int TR, int TC, int E, int ORDER>
__host__ __device__ __forceinline__ Tile locate(const char* in, char* out, int B, int M, int N,
                                                uint32_t blk) {
  uint32_t ntc = ((uint32_t)N + TC - 1) / TC, ntr = ((uint32_t)M + TR - 1) / TR;
  uint32_t per = ntc * ntr, b = blk / per, rem = blk - b * per, tr, tc;
  if (ORDER == ORDER_ROW) {
    tr = rem / ntc;
    tc = rem - tr * ntc;
  } else if (ORDER == ORDER_COL) {
    tc = rem / ntr;
    tr = rem - tc * ntr;
  } else {
    uint32_t a = rem / ntr;
    tr = rem - a * ntr;
    tc = (a + tr) % ntc;
  }
  long long r0 = (long long)tr * TR, c0 = (long long)tc * TC, plane = (long long)M * N * E;
  Tile t;
  t.ldi = (long long)N * E;
  t.ldo = (long long)M * E;
  t.in = in + b * plane + r0 * t.ldi + c0 * E;
  t.out = out + b * plane + c0 * t.ldo + r0 * E;
  t.rows = (int)(M - r0 < TR ? M - r0 : TR);
  t.cols = (int)(N - c0 < TC ? N - c0 : TC);
  return t;
}

}  // namespace at

namespace at {

// The kernel body shared by every template. K is a template's struct: its
// geometry (TR, TC, E, NT) and its two phases, load (global -> shared) and
// store (shared -> global). Interior tiles take the unpredicated, vectorised
// path (FULL = true); edge tiles take a predicated element-wise path.
template <class K>
__device__ __forceinline__ void run(const char* in, char* out, int B, int M, int N, char* smem) {
  Tile t = locate<K::TR, K::TC, K::E, K::ORDER>(in, out, B, M, N, blockIdx.x);
  if (t.rows == K::TR && t.cols == K::TC) {
    K::template load<true>(t, smem, threadIdx.x);
    if (K::SMEM) __syncthreads();
    K::template store<true>(t, smem, threadIdx.x);
  } else {
    K::template load<false>(t, smem, threadIdx.x);
    if (K::SMEM) __syncthreads();
    K::template store<false>(t, smem, threadIdx.x);
  }
}

#ifdef AT_EMULATE
// Host emulation: every block, every thread, phase by phase, in order.
inline int emu_phase = 0, emu_tid = 0;
inline uint32_t emu_block = 0;

template <class K>
void emulate(const char* in, char* out, int B, int M, int N, char* smem) {
  if (B <= 0 || M <= 0 || N <= 0) return;
  uint32_t blocks = (uint32_t)B * ((M + K::TR - 1) / K::TR) * ((N + K::TC - 1) / K::TC);
  for (uint32_t blk = 0; blk < blocks; ++blk) {
    Tile t = locate<K::TR, K::TC, K::E, K::ORDER>(in, out, B, M, N, blk);
    bool full = t.rows == K::TR && t.cols == K::TC;
    for (int i = 0; i < K::SMEM; ++i) smem[i] = (char)0xCD;  // stale shared memory
    emu_block = blk;
    for (emu_phase = 0; emu_phase < 2; ++emu_phase) {
      for (emu_tid = 0; emu_tid < K::NT; ++emu_tid) {
        if (emu_phase == 0) {
          if (full) K::template load<true>(t, smem, emu_tid); else K::template load<false>(t, smem, emu_tid);
        } else {
          if (full) K::template store<true>(t, smem, emu_tid); else K::template store<false>(t, smem, emu_tid);
        }
      }
    }
  }
}
#endif

}  // namespace at
