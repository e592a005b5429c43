// autotrans benchmark helpers (plain CUDA, no template slots): the copy kernel
// of the roofline, the input fill and the reference checks that every
// contender's output is held to (the L2 flush and the spin are verify.cu's).
// Every parameter is 64 bits wide, so the host packs them without padding.
#include <stdint.h>

typedef unsigned long long u64;

// The roofline's copy kernel: 16-byte vectors, four per thread (all loads
// before the stores), then a scalar tail for byte counts that are not a
// multiple of 16. Launch ceil(nbytes / 16 / (4 * blockDim.x)) blocks (at least one).
extern "C" __global__ void at_copy16(uint4* __restrict__ dst, const uint4* __restrict__ src, u64 nbytes) {
  const u64 nvec = nbytes / 16;
  const u64 base = (u64)blockIdx.x * blockDim.x * 4 + threadIdx.x;
  uint4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const u64 i = base + (u64)k * blockDim.x;
    if (i < nvec) v[k] = src[i];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const u64 i = base + (u64)k * blockDim.x;
    if (i < nvec) dst[i] = v[k];
  }
  if (blockIdx.x == 0 && threadIdx.x < (nbytes & 15)) {
    const u64 b = nvec * 16 + threadIdx.x;
    ((uint8_t*)dst)[b] = ((const uint8_t*)src)[b];
  }
}

__device__ __forceinline__ uint32_t at_word(uint32_t seed, u64 w) {
  u64 x = w * 0x9E3779B97F4A7C15ull ^ ((u64)seed << 32 | seed);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return (uint32_t)x;
}

// Pseudo-random input: word w is at_word(seed, w), masked (even and odd words
// apart, for 8-byte floats) so that floating-point values are finite and
// normal (arithmetic peers such as cuBLAS geam then reproduce them exactly),
// then XORed with flip (the complement input keeps them finite and normal).
extern "C" __global__ void at_fill(uint32_t* p, u64 nbytes, u64 seed, u64 and_even, u64 or_even,
                                   u64 and_odd, u64 or_odd, u64 flip) {
  const u64 words = (nbytes + 3) / 4;
  for (u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x; w < words; w += (u64)gridDim.x * blockDim.x) {
    uint32_t v = at_word((uint32_t)seed, w);
    v = (w & 1) ? ((v & (uint32_t)and_odd) | (uint32_t)or_odd) : ((v & (uint32_t)and_even) | (uint32_t)or_even);
    v ^= (uint32_t)flip;
    if (4 * w + 4 <= nbytes) {
      p[w] = v;
    } else {
      for (u64 b = 4 * w; b < nbytes; ++b) ((uint8_t*)p)[b] = (uint8_t)(v >> (8 * (b & 3)));
    }
  }
}

// Byte b of the B x N x M output and the byte of the B x M x N input it must hold.
__device__ __forceinline__ u64 at_source(u64 b, u64 M, u64 N, u64 E) {
  const u64 k = b % E, e = b / E;
  const u64 i = e % M, t = e / M;
  const u64 j = t % N, batch = t / N;
  return ((batch * M + i) * N + j) * E + k;
}

// Reference transpose, byte by byte: out = transpose(in) XOR flip (flip 0xff
// pre-fills an output with the complement of the right answer).
extern "C" __global__ void at_transpose_ref(uint8_t* out, const uint8_t* in, u64 B, u64 M, u64 N, u64 E,
                                            u64 flip) {
  const u64 n = B * M * N * E;
  for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < n; b += (u64)gridDim.x * blockDim.x)
    out[b] = in[at_source(b, M, N, E)] ^ (uint8_t)flip;
}

// Adds to *bad the bytes of out that differ from transpose(in).
extern "C" __global__ void at_count_transpose_diff(const uint8_t* out, const uint8_t* in, u64 B, u64 M, u64 N,
                                                   u64 E, u64* bad) {
  const u64 n = B * M * N * E;
  u64 wrong = 0;
  for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < n; b += (u64)gridDim.x * blockDim.x)
    wrong += out[b] != in[at_source(b, M, N, E)];
  if (wrong) atomicAdd(bad, wrong);
}

// Adds to *bad the bytes where a and b differ (the copies of the roofline).
extern "C" __global__ void at_count_diff(const uint8_t* a, const uint8_t* b, u64 n, u64* bad) {
  u64 wrong = 0;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    wrong += a[i] != b[i];
  if (wrong) atomicAdd(bad, wrong);
}
