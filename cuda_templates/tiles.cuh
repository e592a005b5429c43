// autotrans: a launch's arguments (Args, StridedArgs), the grid (blocks), and
// which tile a block moves (Tile, locate, locate_strided: the walk orders).
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

// A strided launch (KernelConfig.layout "strided"): a TileProblem or a
// RowsProblem of autotrans.core.layout. Pointers, pitches and strides in
// bytes, sizes in elements. Input element (batch, i, j) of the M x N matrices
// is at in + sum(idx * src) + i * ldi + j * sci and goes to out + sum(idx * dst)
// + j * ldo + i * EO (EO: the output's element size, E's unless the kernel
// casts; dst and ldo count output bytes), where idx is the batch index b < B decomposed over the nb
// batch dimensions (size, innermost last; B = prod(size)). Rows kernels
// (rows.cu) take B = 1: row i < M, decomposed over the nb dimensions instead,
// moves its N elements from in + sum(idx * src) to out + sum(idx * dst)
// (ldi, ldo, sci unused).
// Every strided kernel's one parameter, by value; Python packs it as
// autotrans.kernels.templates.STRIDED_ARGS (AT_AGREE_STRIDED_ARGS checks it).
constexpr int MAX_BATCH = 7;   // autotrans.core.layout.MAX_BATCH
struct StridedArgs {
  const char* in;
  char* out;
  long long B, M, N, ldi, ldo, sci;
  int nb;
  long long size[MAX_BATCH], src[MAX_BATCH], dst[MAX_BATCH];
};

// Whether a template sizes its grid itself: templates that declare
// `static constexpr long long grid(long long B, long long M, long long N)`
// (whole.cu: several matrices a block), else one block per tile.
template <class K, class = void> struct has_grid { static constexpr bool value = false; };
template <class K> struct has_grid<K, decltype(void(K::grid(1ll, 1ll, 1ll)))> { static constexpr bool value = true; };

// The tiles a block of K moves side by side (KernelConfig.strip): K::STRIP
// where the template declares `static constexpr int STRIP`, else 1.
template <class K, class = void> struct strip_of { static constexpr int value = 1; };
template <class K> struct strip_of<K, decltype(void(K::STRIP))> { static constexpr int value = K::STRIP; };

// Blocks of a launch of kernel struct K (one per tile, one per strip of tiles,
// or K::grid's); 64-bit. Python's KernelConfig.launch_problems refuses shapes
// that need 2^31 blocks or more, so a launch's block index, tile counts and tile
// coordinates fit in 32 bits.
template <class K>
__host__ __device__ constexpr long long blocks(long long B, long long M, long long N) {
  if constexpr (has_grid<K>::value) return K::grid(B, M, N);
  else if constexpr (strip_of<K>::value > 1)
    return B * ((M + K::TR - 1) / K::TR) * ((N + (long long)K::TC * K::STRIP - 1) / ((long long)K::TC * K::STRIP));
  else return B * ((M + K::TR - 1) / K::TR) * ((N + K::TC - 1) / K::TC);
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
  long long ldi;     // input row pitch, bytes (N * E; strided: StridedArgs::ldi)
  long long ldo;     // output row pitch, bytes (M * E; strided: StridedArgs::ldo)
  long long sci;     // input column pitch, bytes (E; strided: StridedArgs::sci)
  long long left;    // input rows from the tile's first to the matrix's last (M - r0)
  int rows, cols;    // valid input rows / columns in this tile
  bool top;          // the tile starts at its matrix's first row (r0 == 0)
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
// walk: block blk's matrix b and tile (tr, tc), of M x N matrices of TR x TC tiles.
template <int TR, int TC, int ORDER>
__host__ __device__ __forceinline__ void walk(long long M, long long N, uint32_t blk, uint32_t& b, uint32_t& tr,
                                              uint32_t& tc) {
  uint32_t ntc = tiles<TC>(N), ntr = tiles<TR>(M);
  uint32_t per = ntc * ntr, rem;
  b = blk / per;
  rem = blk - b * per;
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
}

// origin: the first row and column of tile (tr, tc), moved back inside the
// matrix where OVERLAP says so.
template <int TR, int TC, bool OVERLAP>
__host__ __device__ __forceinline__ void origin(long long M, long long N, uint32_t tr, uint32_t tc, long long& r0,
                                                long long& c0) {
  r0 = (long long)tr * TR;
  c0 = (long long)tc * TC;
  if (OVERLAP && r0 + TR > M && M >= TR) r0 = M - TR;
  if (OVERLAP && c0 + TC > N && N >= TC) c0 = N - TC;
}

// extent: what of the tile at (r0, c0) lies inside the matrix (left, rows, cols).
template <int TR, int TC>
__host__ __device__ __forceinline__ void extent(long long M, long long N, long long r0, long long c0, Tile& t) {
  t.left = M - r0;
  t.rows = t.left < TR ? (int)t.left : TR;
  t.cols = (int)(N - c0 < TC ? N - c0 : TC);
  t.top = r0 == 0;
}

template <int TR, int TC, int E, int ORDER, bool OVERLAP>
__host__ __device__ __forceinline__ Tile locate(const Args& a, uint32_t blk) {
  const long long M = a.M, N = a.N;
  uint32_t b, tr, tc;
  walk<TR, TC, ORDER>(M, N, blk, b, tr, tc);
  long long r0, c0, plane = M * N * E;
  origin<TR, TC, OVERLAP>(M, N, tr, tc, r0, c0);
  Tile t;
  t.ldi = N * E;
  t.ldo = M * E;
  t.sci = E;
  t.in = a.in + b * plane + r0 * t.ldi + c0 * E;
  t.out = a.out + b * plane + c0 * t.ldo + r0 * E;
  extent<TR, TC>(M, N, r0, c0, t);
  return t;
}

// The byte offsets, in the input (oi[k]) and the output (oo[k]), of R indices
// x[k] of a strided launch's nb dimensions (x[k] < prod(size); innermost
// last). I: uint32_t where every index and size is below 2^32 (one 32-bit
// division a dimension and index, the divisor's reciprocal shared by the R
// indices), else unsigned long long.
template <class I, int R>
__host__ __device__ __forceinline__ void batch_offsets(const StridedArgs& a, I (&x)[R], long long (&oi)[R],
                                                       long long (&oo)[R]) {
#pragma unroll
  for (int k = 0; k < R; ++k) oi[k] = oo[k] = 0;
#pragma unroll
  for (int d = MAX_BATCH - 1; d > 0; --d) {
    if (d < a.nb) {
      const I s = (I)a.size[d];
#pragma unroll
      for (int k = 0; k < R; ++k) {
        I q = x[k] / s, i = x[k] - q * s;
        oi[k] += (long long)i * a.src[d];
        oo[k] += (long long)i * a.dst[d];
        x[k] = q;
      }
    }
  }
  if (a.nb > 0) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      oi[k] += (long long)x[k] * a.src[0];
      oo[k] += (long long)x[k] * a.dst[0];
    }
  }
}

// locate for a strided launch (StridedArgs, TileProblem semantics): the same
// walk over B matrices of M x N, matrix b at the offsets of its batch index.
// in, out: a.in and a.out as the caller holds them (kernel.cuh's run_strided).
// EO: the output's element size (E's unless the kernel casts).
template <int TR, int TC, int E, int ORDER, bool OVERLAP, int EO = E>
__host__ __device__ __forceinline__ Tile locate_strided(const StridedArgs& a, const char* in, char* out,
                                                        uint32_t blk) {
  const long long M = a.M, N = a.N;
  uint32_t b, tr, tc;
  walk<TR, TC, ORDER>(M, N, blk, b, tr, tc);
  long long r0, c0, boi[1], boo[1];
  uint32_t x[1] = {b};   // b < 2^31: the grid's limit
  origin<TR, TC, OVERLAP>(M, N, tr, tc, r0, c0);
  batch_offsets<uint32_t, 1>(a, x, boi, boo);
  Tile t;
  t.ldi = a.ldi;
  t.ldo = a.ldo;
  t.sci = a.sci;
  t.in = in + boi[0] + r0 * a.ldi + c0 * a.sci;
  t.out = out + boo[0] + c0 * a.ldo + r0 * EO;
  extent<TR, TC>(M, N, r0, c0, t);
  return t;
}

template <int TR, int TC, int E, int ORDER, bool OVERLAP, int EO = E>
__host__ __device__ __forceinline__ Tile locate_strided(const StridedArgs& a, uint32_t blk) {
  return locate_strided<TR, TC, E, ORDER, OVERLAP, EO>(a, a.in, a.out, blk);
}

// The byte offset of index x of one side of an NdTileProblem (kernels.strided.nd_args'
// encoding): x decomposed over the side's slots [lo, hi) of a (sizes innermost
// first; strides src[] for the m side, SRC, dst[] for the n side), what remains
// times last (the outermost dim's stride). Every slot is named at compile time,
// predicated on [lo, hi): kernel parameters indexed at run time would be copied
// to local memory.
template <class I, bool SRC>
__host__ __device__ __forceinline__ long long nd_side(const StridedArgs& a, I x, int lo, int hi, long long last) {
  long long o = 0;
#pragma unroll
  for (int d = 0; d < MAX_BATCH - 1; ++d) {
    if (d >= lo && d < hi) {
      const I s = (I)a.size[d];
      const I q = x / s;
      o += (long long)(x - q * s) * (SRC ? a.src[d] : a.dst[d]);
      x = q;
    }
  }
  return o + (long long)x * last;
}

// x, opaque to the compiler on the GPU (an empty asm), so that nothing computed
// from it is hoisted out of a loop and held in registers across it (a strip's
// loop over tiles: each tile's thread indices are computed afresh).
template <class T>
__host__ __device__ __forceinline__ T opaque(T x) {
#ifdef __CUDA_ARCH__
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "opaque takes 32- and 64-bit values");
  if constexpr (sizeof(T) == 8) asm volatile("" : "+l"(x)); else asm volatile("" : "+r"(x));
#endif
  return x;
}

// Tile k of a strip of tiles of TC columns (KernelConfig.strip): strip is the
// strip as one tile (locate_strided's, TC times the strip's length wide), k *
// TC < strip.cols.
template <int TC>
__host__ __device__ __forceinline__ Tile strip_tile(Tile strip, int k) {
  Tile t = strip;
  t.in = strip.in + (long long)k * TC * strip.sci;
  t.out = strip.out + (long long)k * TC * strip.ldo;
  t.cols = strip.cols - k * TC < TC ? strip.cols - k * TC : TC;
  return t;
}

}  // namespace at
