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
__host__ __device__ __forceinline__ T ldg(const char* p) {  // read-only path: the input never changes
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

// Stores the SZ bytes at byte offset pos (a multiple of SZ) of v to p + pos.
template <int SZ, typename T>
__host__ __device__ __forceinline__ void stg_piece(char* p, T v, uint32_t pos) {
  uint32_t w = word_at(v, pos / 4);
  if constexpr (SZ == 8) stg<uint2>(p + pos, make_uint2(w, word_at(v, pos / 4 + 1)));
  else stg<typename Bytes<SZ>::T>(p + pos, (typename Bytes<SZ>::T)(w >> (8 * (pos & 3))));
}

// Partial stores of a vector v whose sizeof(T)-aligned home is p: bytes
// [lo, sizeof(T)) (stg_from) or [0, hi) (stg_upto), each in at most
// log2(sizeof(T)) naturally aligned pieces. Bytes outside the range are not written,
// so two blocks may fill the two parts of one vector.
template <typename T>
__host__ __device__ __forceinline__ void stg_from(char* p, T v, uint32_t lo) {
  if (lo & 1) stg_piece<1>(p, v, lo), lo += 1;
  if (lo & 2) stg_piece<2>(p, v, lo), lo += 2;
  if constexpr (sizeof(T) > 4) if (lo & 4) stg_piece<4>(p, v, lo), lo += 4;
  if constexpr (sizeof(T) > 8) if (lo & 8) stg_piece<8>(p, v, lo);
}

template <typename T>
__host__ __device__ __forceinline__ void stg_upto(char* p, T v, uint32_t hi) {
  uint32_t pos = 0;
  if constexpr (sizeof(T) > 8) if (hi & 8) stg_piece<8>(p, v, pos), pos += 8;
  if constexpr (sizeof(T) > 4) if (hi & 4) stg_piece<4>(p, v, pos), pos += 4;
  if (hi & 2) stg_piece<2>(p, v, pos), pos += 2;
  if (hi & 1) stg_piece<1>(p, v, pos);
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

// One tile of a B x M x N row-major input, and where it lands in the
// B x N x M output. Offsets are 64-bit: M*N*elem may pass 2^31.
struct Tile {
  const char* in;    // first input byte of the tile
  char* out;         // first output byte of the tile
  long long ldi;     // input row pitch, bytes (N * E)
  long long ldo;     // output row pitch, bytes (M * E)
  int rows, cols;    // valid input rows / columns in this tile
  int left;          // input rows from the tile's first to the matrix's last (M - r0)
};

enum { ORDER_ROW = 0, ORDER_COL = 1, ORDER_DIAG = 2, ORDER_BAND = 3 };

// Blocks walk tiles batch outermost; within a matrix in row-major order
// (consecutive blocks read along input rows), column-major order (consecutive
// blocks write along output rows), diagonally, or in bands of BAND tile columns
// (row-major within a band), so that the blocks running at once read BAND tile
// widths of each row instead of one: where the row pitch is a multiple of a
// large power of two, a column-major walk's reads all fall on a few DRAM channels.
// OVERLAP: a last tile that would stick out of the matrix moves back inside it
// (where the matrix is at least a tile wide or tall) and rewrites a few elements
// of its neighbour with the same values, so every tile takes the full path.
template <int TR, int TC, int E, int ORDER, bool OVERLAP>
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
  } else if (ORDER == ORDER_BAND) {
    constexpr uint32_t BAND = 32;
    uint32_t band = rem / (BAND * ntr), first = band * BAND, in = rem - first * ntr;
    uint32_t w = ntc - first < BAND ? ntc - first : BAND;  // the last band may be narrower
    tr = in / w;
    tc = first + (in - tr * w);
  } else {
    uint32_t a = rem / ntr;
    tr = rem - a * ntr;
    tc = (a + tr) % ntc;
  }
  long long r0 = (long long)tr * TR, c0 = (long long)tc * TC, plane = (long long)M * N * E;
  if (OVERLAP && r0 + TR > M && M >= TR) r0 = M - TR;
  if (OVERLAP && c0 + TC > N && N >= TC) c0 = N - TC;
  Tile t;
  t.ldi = (long long)N * E;
  t.ldo = (long long)M * E;
  t.in = in + b * plane + r0 * t.ldi + c0 * E;
  t.out = out + b * plane + c0 * t.ldo + r0 * E;
  t.left = (int)(M - r0);
  t.rows = t.left < TR ? t.left : TR;
  t.cols = (int)(N - c0 < TC ? N - c0 : TC);
  return t;
}

}  // namespace at

namespace at {

// The element-wise paths of edge tiles, for templates whose shared tile holds
// element (input row r, input column c) at byte K::off(r, c).
template <class K>
__host__ __device__ __forceinline__ void load_elems(const Tile& t, char* s, int tid) {
  for (int i = tid; i < K::TR * K::TC; i += K::NT) {
    int r = i / K::TC, c = i % K::TC;
    if (r < t.rows && c < t.cols)
      sts<typename K::ElemT>(s, K::off(r, c), ldg<typename K::ElemT>(t.in + r * t.ldi + (long long)c * K::E));
  }
}

template <class K>
__host__ __device__ __forceinline__ void store_elems(const Tile& t, const char* s, int tid) {
  for (int i = tid; i < K::TR * K::TC; i += K::NT) {
    int c = i / K::TR, r = i % K::TR;
    if (r < t.rows && c < t.cols)
      stg<typename K::ElemT>(t.out + c * t.ldo + (long long)r * K::E, lds<typename K::ElemT>(s, K::off(r, c)));
  }
}

// Whether a template has a middle phase (K::mid, shared -> shared, between
// load and store): templates that declare `static constexpr bool MID = true`.
template <class K, class = void> struct has_mid { static constexpr bool value = false; };
template <class K> struct has_mid<K, decltype(void(K::MID))> { static constexpr bool value = K::MID; };

// The kernel body shared by every template. K is a template's struct: its
// geometry (TR, TC, E, NT) and its phases, load (global -> shared), optionally
// mid, and store (shared -> global). Interior tiles take the unpredicated,
// vectorised path (FULL = true); edge tiles take a predicated element-wise path.
template <class K, bool FULL>
__device__ __forceinline__ void phases(const Tile& t, char* smem) {
  K::template load<FULL>(t, smem, threadIdx.x);
  if (K::SMEM) __syncthreads();
  if constexpr (has_mid<K>::value) {
    K::template mid<FULL>(t, smem, threadIdx.x);
    __syncthreads();
  }
  K::template store<FULL>(t, smem, threadIdx.x);
}

template <class K>
__device__ __forceinline__ void run(const char* in, char* out, int B, int M, int N, char* smem) {
  Tile t = locate<K::TR, K::TC, K::E, K::ORDER, K::OVERLAP>(in, out, B, M, N, blockIdx.x);
  if (t.rows == K::TR && t.cols == K::TC) phases<K, true>(t, smem);
  else phases<K, false>(t, smem);
}

#ifdef AT_EMULATE
// Host emulation: every block, every thread, phase by phase, in order.
inline int emu_phase = 0, emu_tid = 0;
inline uint32_t emu_block = 0;

template <class K, bool FULL>
void emu_step(const Tile& t, char* smem) {
  if (emu_phase == 0) K::template load<FULL>(t, smem, emu_tid);
  else if (emu_phase == 2) K::template store<FULL>(t, smem, emu_tid);
  else if constexpr (has_mid<K>::value) K::template mid<FULL>(t, smem, emu_tid);
}

template <class K>
void emulate(const char* in, char* out, int B, int M, int N, char* smem) {
  if (B <= 0 || M <= 0 || N <= 0) return;
  uint32_t blocks = (uint32_t)B * ((M + K::TR - 1) / K::TR) * ((N + K::TC - 1) / K::TC);
  for (uint32_t blk = 0; blk < blocks; ++blk) {
    Tile t = locate<K::TR, K::TC, K::E, K::ORDER, K::OVERLAP>(in, out, B, M, N, blk);
    bool full = t.rows == K::TR && t.cols == K::TC;
    for (int i = 0; i < K::SMEM; ++i) smem[i] = (char)0xCD;  // stale shared memory
    emu_block = blk;
    for (emu_phase = 0; emu_phase < 3; ++emu_phase) {
      if (emu_phase == 1 && !has_mid<K>::value) continue;
      for (emu_tid = 0; emu_tid < K::NT; ++emu_tid) {
        if (full) emu_step<K, true>(t, smem); else emu_step<K, false>(t, smem);
      }
    }
  }
}
#endif

}  // namespace at

// A template's kernel: NAME(in, out, B, M, N) runs at::run on struct NAME_k
// (dynamic shared memory of NAME_k::SMEM bytes). Nothing in the host emulator.
#ifndef AT_EMULATE
#define AT_KERNEL_ENTRY(NAME, THREADS)                                                            \
  extern "C" __global__ void __launch_bounds__(THREADS)                                           \
  NAME(const char* __restrict__ in, char* __restrict__ out, int B, int M, int N) {                \
    extern __shared__ __align__(16) char smem[];                                                  \
    at::run<NAME##_k>(in, out, B, M, N, smem);                                                    \
  }
#else
#define AT_KERNEL_ENTRY(NAME, THREADS)
#endif
