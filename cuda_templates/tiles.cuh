// autotrans: a launch's arguments (Args), the grid (blocks), and which tile a
// block moves (Tile, locate: the walk orders).
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace at {

// A launch: a B x M x N row-major input and its B x N x M output. Every
// transpose kernel's parameters are these fields, in order and of these types
// (AT_KERNEL_ENTRY), so its parameter block is laid out as this struct is;
// Python packs it as autotrans.kernels.templates.ARGS, and every rendered
// kernel checks that layout (AT_AGREE_ARGS).
struct Args {
  const char* in;
  char* out;
  long long B, M, N;
};

// Blocks of a launch of kernel struct K (one per tile); 64-bit. Python's
// KernelConfig.launch_problems refuses shapes that need 2^31 blocks or more, so
// a launch's block index, tile counts and tile coordinates fit in 32 bits.
template <class K>
__host__ __device__ constexpr long long blocks(long long B, long long M, long long N) {
  return B * ((M + K::TR - 1) / K::TR) * ((N + K::TC - 1) / K::TC);
}

// Tiles of side T (a power of two) covering n >= 0 elements, as 32 bits.
template <int T>
__host__ __device__ __forceinline__ uint32_t tiles(long long n) {
  return (uint32_t)(((unsigned long long)n + (T - 1)) / T);
}

// One tile of the input, and where it lands in the output. Offsets, pitches and
// left are 64-bit (they scale with M and N); rows and cols are at most a tile side.
struct Tile {
  const char* in;    // first input byte of the tile
  char* out;         // first output byte of the tile
  long long ldi;     // input row pitch, bytes (N * E)
  long long ldo;     // output row pitch, bytes (M * E)
  long long left;    // input rows from the tile's first to the matrix's last (M - r0)
  int rows, cols;    // valid input rows / columns in this tile
};

enum { ORDER_ROW = 0, ORDER_COL = 1, ORDER_BAND = 2 };

// Blocks walk tiles batch outermost; within a matrix in row-major order
// (consecutive blocks read along input rows), column-major order (consecutive
// blocks write along output rows), or in bands of BAND tile columns (row-major
// within a band), so that the blocks running at once read BAND tile widths of
// each row instead of one: where the row pitch is a multiple of a large power
// of two, a column-major walk's reads all fall on a few DRAM channels.
// OVERLAP: a last tile that would stick out of the matrix moves back inside it
// (where the matrix is at least a tile wide or tall) and rewrites a few elements
// of its neighbour with the same values, so every tile takes the full path.
template <int TR, int TC, int E, int ORDER, bool OVERLAP>
__host__ __device__ __forceinline__ Tile locate(const Args& a, uint32_t blk) {
  const long long M = a.M, N = a.N;
  uint32_t ntc = tiles<TC>(N), ntr = tiles<TR>(M);
  uint32_t per = ntc * ntr, b = blk / per, rem = blk - b * per, tr, tc;
  if constexpr (ORDER == ORDER_ROW) {
    tr = rem / ntc;
    tc = rem - tr * ntc;
  } else if constexpr (ORDER == ORDER_COL) {
    tc = rem / ntr;
    tr = rem - tc * ntr;
  } else {
    static_assert(ORDER == ORDER_BAND, "unknown tile order");
    constexpr uint32_t BAND = 32;
    uint32_t band = rem / (BAND * ntr), first = band * BAND, in = rem - first * ntr;
    uint32_t w = ntc - first < BAND ? ntc - first : BAND;  // the last band may be narrower
    tr = in / w;
    tc = first + (in - tr * w);
  }
  long long r0 = (long long)tr * TR, c0 = (long long)tc * TC, plane = M * N * E;
  if (OVERLAP && r0 + TR > M && M >= TR) r0 = M - TR;
  if (OVERLAP && c0 + TC > N && N >= TC) c0 = N - TC;
  Tile t;
  t.ldi = N * E;
  t.ldo = M * E;
  t.in = a.in + b * plane + r0 * t.ldi + c0 * E;
  t.out = a.out + b * plane + c0 * t.ldo + r0 * E;
  t.left = M - r0;
  t.rows = t.left < TR ? (int)t.left : TR;
  t.cols = (int)(N - c0 < TC ? N - c0 : TC);
  return t;
}

}  // namespace at
