// Probe (not a library kernel): the "walk" transpose for rows at any alignment.
// A block owns a strip of input columns [c0, c0 + ws) and walks down a chunk of
// rows [rA, rB) in steps of H rows. Raw input rows (the aligned 16-byte vectors
// covering the strip) stream through S cp.async stages; a mid phase realigns
// and transposes each step into a per-output-row ring of 2H elements; the store
// phase writes every aligned 32-byte output sector whose last row falls in the
// step (its earlier rows are still in the ring), so interior output sectors are
// written whole, once, by one instruction. Only the chunk's first and last
// sectors of each output row are written in parts.
// Compiled for the GPU (kernels below) or, with -DWALK_HOST, for the host test
// (walk_probe_host.cu), which runs the same phase functions thread by thread.
#include "mem.cuh"
#include "shuffle.cuh"
#include "pieces.cuh"
#include "async.cuh"

namespace walk {

__host__ __device__ __forceinline__ void commit() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> __host__ __device__ __forceinline__ void wait_group() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Bytes [lo, hi) of a 16-byte vector v whose aligned home is p.
__host__ __device__ __forceinline__ void stg_range(char* p, uint4 v, uint32_t lo, uint32_t hi) {
  if (lo == 0 && hi == 16) at::stg<uint4>(p, v);
  else if (hi == 16) at::stg_from(p, v, lo);
  else if (lo == 0) at::stg_upto(p, v, hi);
  else
    for (uint32_t b = lo; b < hi; ++b) at::stg_piece<1>(p, v, b);
}

struct Args {
  const char* in;
  char* out;
  long long B, M, N, ldi, ldo, bsi, bso, L;
};

// The smallest pitch >= n with r * pitch = 4 (mod 8): two row groups of 4 vectors, 8 bank groups.
__host__ __device__ constexpr int pitch4(int n, int r) { return (r * n) % 8 == 4 ? n : pitch4(n + 1, r); }

template <int E, int W, int H, int NT, int S, int Q>
struct K {
  static constexpr int V = 16, KV = V / E, R = 4 / E, KS = 32 / E;
  static constexpr int NVC = (W + KV - 1) / KV;                 // vector columns of a strip
  static constexpr int NVR = NVC + 1;                           // raw vectors per row, from a 16-byte-aligned base
  // raw row pitch in vectors: a quarter warp's 8 lanes (NVC >= 8: one row; 4: two row groups) read
  // 8 different 16-byte bank groups
  static constexpr int NVRP = NVC >= 8 ? NVR : pitch4(NVR, R);
  static constexpr int RAWB = NVRP * V, STAGE = H * RAWB;
  static constexpr int NRG = H / R;                             // row groups of a step
  static constexpr int RING = Q * H;                             // ring rows (Q = 4: mid(j + 1) writes while store(j) reads)
  static constexpr int RW = RING * E / 4;                       // ring words per output row (a power of 2)
  static constexpr int RWP = RW + 1;
  static constexpr int G = 32 / NVC;                            // row groups a warp's mid covers
  static constexpr int SKEW = ((G - KV * RWP) % 32 + 32) % 32;  // lanes of one mid store: 32 banks
  static constexpr int TW = NVC * (KV * RWP + SKEW);           // words of the transposed rings
  static constexpr int SMEM = S * STAGE + TW * 4;
  static constexpr int UPS = H / KS;                            // sectors a step writes per output row
  static_assert(H % KS == 0 && (RW & (RW - 1)) == 0 && R * E == 4 && S >= 3 && (Q == 2 || Q == 4), "geometry");
  static_assert(NVC == 4 || (NVC >= 8 && NVC <= 32), "4 or 8-32 vector columns");

  static constexpr int IT1 = (H * NVR + NT - 1) / NT;          // load vectors a thread, per step
  static constexpr int IT2 = (NRG * NVC + NT - 1) / NT;        // mid groups a thread
  static constexpr int IT3 = (W * UPS * 2 + NT - 1) / NT;      // store vectors a thread
  static constexpr int IT4 = (W * 2 + NT - 1) / NT;            // the last step's extra vectors

  __host__ __device__ static __forceinline__ uint32_t tword(int c) { return (uint32_t)(c * RWP + (c / KV) * SKEW); }

  // One block's place: strip, chunk, batch.
  struct Block {
    const char* src;   // the batch's input row 0, column c0
    char* dst;         // output row c0 of the batch
    long long rA, ldi, ldo;
    int cols, nrows, steps;
  };

  __host__ __device__ static Block locate(const Args& a, uint32_t blk) {
    const long long strips = (a.N + W - 1) / W, ws = (a.N + strips - 1) / strips, chunks = (a.M + a.L - 1) / a.L;
    const long long strip = blk % strips, rest = blk / strips, chunk = rest % chunks, b = rest / chunks;
    Block k;
    const long long c0 = strip * ws;
    k.rA = chunk * a.L;
    k.cols = (int)(a.N - c0 < ws ? a.N - c0 : ws);
    k.nrows = (int)((k.rA + a.L < a.M ? k.rA + a.L : a.M) - k.rA);
    k.steps = (k.nrows + H - 1) / H;
    k.src = a.in + b * a.bsi + c0 * E;
    k.dst = a.out + b * a.bso + c0 * a.ldo;
    k.ldi = a.ldi;
    k.ldo = a.ldo;
    return k;
  }

  __host__ __device__ static long long grid(const Args& a) {
    const long long strips = (a.N + W - 1) / W;
    return a.B * strips * ((a.M + a.L - 1) / a.L);
  }

  // A thread's work in every step, computed once a block: what moves with the
  // step is the row (j * H), nothing else.
  struct Thread {
    const char* lp[IT1];     // load: the input row's first strip byte, in step 0
    uint32_t loff[IT1];      // load: raw byte of the vector in a stage
    int lrow[IT1], lv[IT1];  // load: row in the step, vector in the row
    uint32_t mbase[IT2][R];  // mid: 32-bit address of each row's first strip byte, step 0
    uint32_t moff[IT2][R];   // mid: raw byte of the vector in a stage
    uint32_t mw[IT2];        // mid: ring word of the group's first column (ring half 0)
    bool mon[IT2];
    char* sp[IT3 + IT4];     // store: output row c at the chunk's first row (null: none)
    int sv[IT3 + IT4];       // store: the vector's first row in step 0 (from rA)
    uint32_t sw[IT3 + IT4];  // store: ring word of row c
  };

  __host__ __device__ static void prepare(const Block& k, int tid, Thread& t) {
    const uint32_t ldi32 = (uint32_t)k.ldi, src32 = (uint32_t)(uintptr_t)k.src;
#pragma unroll
    for (int q = 0; q < IT1; ++q) {
      const int i = tid + q * NT, r = i / NVR;
      t.lrow[q] = i < H * NVR ? r : 1 << 30;   // none: past every chunk
      t.lv[q] = i % NVR;
      t.loff[q] = (uint32_t)(r * RAWB + t.lv[q] * 16);
      t.lp[q] = k.src + (k.rA + r) * k.ldi;
    }
#pragma unroll
    for (int q = 0; q < IT2; ++q) {
      const int i = tid + q * NT, vc = i % NVC, rg = i / NVC;
      t.mon[q] = i < NRG * NVC;
#pragma unroll
      for (int x = 0; x < R; ++x) {
        const int r = rg * R + x;
        t.mbase[q][x] = src32 + (uint32_t)(k.rA + r) * ldi32;
        t.moff[q][x] = (uint32_t)(r * RAWB + vc * 16);
      }
      t.mw[q] = tword(vc * KV) + (uint32_t)rg;
    }
    const uint32_t rAm = (uint32_t)k.rA & (KS - 1);
#pragma unroll
    for (int q = 0; q < IT3 + IT4; ++q) {
      const bool extra = q >= IT3;
      const int i = tid + (extra ? q - IT3 : q) * NT;
      const int c = extra ? i >> 1 : i / (2 * UPS), u = extra ? UPS : (i >> 1) % UPS, half = i & 1;
      const bool on = c < k.cols && i < (extra ? W * 2 : W * UPS * 2);
      char* row = k.dst + (long long)c * k.ldo;
      const uint32_t a = (uint32_t)(((uintptr_t)row / E) & (KS - 1));
      // first row of the step's first sector, from rA: -KS + 1 + ((KS - a - rAm + KS - 1) mod KS)
      const int s = -KS + 1 + (int)(((KS - a) - rAm + (uint32_t)(KS - 1)) & (KS - 1)) + u * KS;
      t.sp[q] = on ? row + k.rA * E : nullptr;
      t.sv[q] = s + half * KV;
      t.sw[q] = tword(c);
    }
  }

  // Step j's raw rows into stage j % S (cp.async; nothing past the block's rows or columns).
  __host__ __device__ static __forceinline__ void load(const Block& k, const Thread& t, char* smem, int j) {
    if (j >= k.steps) return;
    const uint32_t st = (uint32_t)(j % S) * STAGE;
    const long long step = (long long)j * H * k.ldi;
#pragma unroll
    for (int q = 0; q < IT1; ++q) {
      const char* p = t.lp[q] + step;
      const uint32_t sh = (uint32_t)(uintptr_t)p & 15;
      if (t.lrow[q] + j * H < k.nrows && t.lv[q] * 16 < (int)sh + k.cols * E)
        at::cp_async16(smem, st + t.loff[q], p - sh + t.lv[q] * 16);
    }
  }

  // Step j: raw stage -> ring quarter j & 3, realigned and transposed.
  __host__ __device__ static __forceinline__ void mid(const Block& k, const Thread& t, char* smem, int j) {
    const uint32_t st = (uint32_t)(j % S) * STAGE, ring = S * STAGE;
    const uint32_t step = (uint32_t)(j * H) * (uint32_t)k.ldi, half = (uint32_t)((j & (Q - 1)) * H * E / 4);
#pragma unroll
    for (int q = 0; q < IT2; ++q) {
      if (IT2 * NT == NRG * NVC || t.mon[q]) {
        uint4 w[R];
#pragma unroll
        for (int x = 0; x < R; ++x)
          w[x] = at::lds_span<uint4, E>(smem, st + t.moff[q][x] + ((t.mbase[q][x] + step) & 15));
#pragma unroll
        for (int e = 0; e < KV; ++e) {
          uint32_t o[1];
          at::gather<E, R>(w, e, o);
          at::sts<uint32_t>(smem, ring + 4 * (t.mw[q] + e * RWP + half), o[0]);
        }
      }
    }
  }

  // One 16-byte output vector: rows [v0, v0 + KV) from rA of the output row at p (the
  // chunk's first row), from the ring; FULL: every row inside the chunk.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void vector(const Block& k, char* smem, char* p, int v0, uint32_t sw) {
    const uint32_t pos = (uint32_t)(v0 & (RING - 1)) * E, w0 = pos / 4, sh = 8 * (pos & 3);
    const uint32_t ring = S * STAGE + 4 * sw;
    uint32_t x[5], y[4];
#pragma unroll
    for (int q = 0; q < 5; ++q) x[q] = at::lds<uint32_t>(smem, ring + 4 * ((w0 + q) & (RW - 1)));
#pragma unroll
    for (int q = 0; q < 4; ++q) y[q] = at::funnel(x[q], x[q + 1], sh);
    const uint4 v = make_uint4(y[0], y[1], y[2], y[3]);
    if constexpr (FULL) {
      at::stg<uint4>(p + (long long)v0 * E, v);
    } else {
      if (v0 >= k.nrows || v0 + KV <= 0) return;
      const uint32_t lo = v0 < 0 ? (uint32_t)(-v0) * E : 0;
      const uint32_t hi = v0 + KV > k.nrows ? (uint32_t)(k.nrows - v0) * E : 16;
      stg_range(p + (long long)v0 * E, v, lo, hi);
    }
  }

  // Step j's sectors of each output row: those whose last row is in the step; the
  // last step also the one that starts before the chunk's end and ends after it.
  __host__ __device__ static __forceinline__ void store(const Block& k, const Thread& t, char* smem, int j) {
    const bool edge = j == 0 || j >= k.steps - 2;
#pragma unroll
    for (int q = 0; q < IT3; ++q) {
      if (t.sp[q]) {
        if (edge) vector<false>(k, smem, t.sp[q], t.sv[q] + j * H, t.sw[q]);
        else vector<true>(k, smem, t.sp[q], t.sv[q] + j * H, t.sw[q]);
      }
    }
    if (j == k.steps - 1) {
#pragma unroll
      for (int q = IT3; q < IT3 + IT4; ++q)
        if (t.sp[q]) vector<false>(k, smem, t.sp[q], t.sv[q] + j * H, t.sw[q]);
    }
  }
};

#ifdef __CUDACC__
// One barrier a step: in the interval after it, mid(j + 1) fills ring quarter
// (j + 1) & 3 while store(j) reads quarters j & 3 and (j - 1) & 3, and the
// loads of step j + S - 1 refill the stage mid(j - 1) read two intervals ago.
template <int E, int W, int H, int NT, int S, int Q>
__device__ __forceinline__ void run(const Args& a) {
  typedef K<E, W, H, NT, S, Q> k;
  extern __shared__ __align__(16) char smem[];
  const typename k::Block b = k::locate(a, blockIdx.x);
  typename k::Thread t;
  k::prepare(b, threadIdx.x, t);
#pragma unroll 1
  for (int j = 0; j < S - 1; ++j) k::load(b, t, smem, j), commit();
  if constexpr (Q == 4) {
    wait_group<S - 2>();
    __syncthreads();
    k::mid(b, t, smem, 0);
#pragma unroll 1
    for (int j = 0; j < b.steps; ++j) {
      wait_group<S - 3>();
      __syncthreads();
      k::load(b, t, smem, j + S - 1);
      commit();
      if (j + 1 < b.steps) k::mid(b, t, smem, j + 1);
      k::store(b, t, smem, j);
    }
  } else {   // two barriers a step: mid(j) | store(j)
#pragma unroll 1
    for (int j = 0; j < b.steps; ++j) {
      k::load(b, t, smem, j + S - 1);
      commit();
      wait_group<S - 1>();
      __syncthreads();
      k::mid(b, t, smem, j);
      __syncthreads();
      k::store(b, t, smem, j);
    }
  }
}
#endif

// The host's order of the same phases: every thread of a phase, phase by phase.
template <int E, int W, int H, int NT, int S, int Q>
void emulate(const Args& a, char* smem) {
  typedef K<E, W, H, NT, S, Q> k;
  static typename k::Thread t[NT];
  for (long long blk = 0; blk < k::grid(a); ++blk) {
    const typename k::Block b = k::locate(a, (uint32_t)blk);
    for (int i = 0; i < k::SMEM; ++i) smem[i] = (char)0xCD;
    for (int i = 0; i < NT; ++i) k::prepare(b, i, t[i]);
    for (int j = 0; j < S - 1; ++j)
      for (int i = 0; i < NT; ++i) k::load(b, t[i], smem, j);
    if (Q == 4)
      for (int i = 0; i < NT; ++i) k::mid(b, t[i], smem, 0);
    for (int j = 0; j < b.steps; ++j) {
      for (int i = 0; i < NT; ++i) k::load(b, t[i], smem, j + S - 1);
      const int m = Q == 4 ? j + 1 : j;   // the step whose mid runs in this interval
      if (m < b.steps)
        for (int i = 0; i < NT; ++i) k::mid(b, t[i], smem, m);
      for (int i = 0; i < NT; ++i) k::store(b, t[i], smem, j);
    }
  }
}

}  // namespace walk

#define WALK_VARIANTS(X) \
  X(w1_64_128_256_4q4, 1, 64, 128, 256, 4, 4) \
  X(w1_256_64_256_4q2, 1, 256, 64, 256, 4, 2) \
  X(w1_256_32_256_4q4, 1, 256, 32, 256, 4, 4) \
  X(w1_256_64_512_3q2, 1, 256, 64, 512, 3, 2) \
  X(w1_512_32_512_3q2, 1, 512, 32, 512, 3, 2) \
  X(w1_512_32_256_3q2, 1, 512, 32, 256, 3, 2) \
  X(w1_128_64_256_4q4, 1, 128, 64, 256, 4, 4) \
  X(w2_64_64_256_4q4, 2, 64, 64, 256, 4, 4) \
  X(w2_128_32_256_4q4, 2, 128, 32, 256, 4, 4) \
  X(w2_256_32_512_3q2, 2, 256, 32, 512, 3, 2) \
  X(w2_256_16_256_4q4, 2, 256, 16, 256, 4, 4) \
  X(w2_128_64_256_3q2, 2, 128, 64, 256, 3, 2) \
  X(w4_32_32_256_4q4, 4, 32, 32, 256, 4, 4) \
  X(w4_64_32_256_3q2, 4, 64, 32, 256, 3, 2) \
  X(w4_128_16_512_3q2, 4, 128, 16, 512, 3, 2) \
  X(w4_64_16_256_4q4, 4, 64, 16, 256, 4, 4) \
  X(w1_272_32_256_4q4, 1, 272, 32, 256, 4, 4) \
  X(w1_272_64_256_3q2, 1, 272, 64, 256, 3, 2) \
  X(w1_272_32_512_4q4, 1, 272, 32, 512, 4, 4) \
  X(w2_136_32_256_4q4, 2, 136, 32, 256, 4, 4) \
  X(w2_136_16_256_4q4, 2, 136, 16, 256, 4, 4) \
  X(w2_136_32_256_3q2, 2, 136, 32, 256, 3, 2) \

#if defined(__CUDACC__) && !defined(WALK_HOST)
#define WALK_KERNEL(NAME, E, W, H, NT, S, Q) \
  extern "C" __global__ void __launch_bounds__(NT) NAME(const walk::Args a) { walk::run<E, W, H, NT, S, Q>(a); }
WALK_VARIANTS(WALK_KERNEL)
#endif
