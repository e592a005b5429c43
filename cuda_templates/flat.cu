// autotrans template: rows whose output lies back to back, written flat (a
// RowsProblem of autotrans.core.layout whose innermost row dimension's dst
// stride is the row's bytes: flat.py's runs). Rows are decomposed over the
// launch's nb dimensions as rows.cu's are (at::batch_offsets); the innermost,
// of size S0 and input stride SS, makes each index of the others one run of
// L = S0 * N contiguous output elements. Run p's element f is input row r = f
// / N (SS apart) at column c = f % N. A block moves TR runs side by side
// (p, p + 1, ...: their rows neighbours in memory where the input is
// C-ordered, so one SM's L1 serves the sectors they share), NTR = NT / TR
// threads (whole warps) a run, and stores CH = NTR * VPT aligned V-byte
// vectors of each (the launch walks groups of TR runs, then the runs'
// vectors: RV(L) = ceil(L E / V) + 1 at most, the first may begin before
// the run); each thread VPT vectors NTR apart, each gathered from KV = V / E element
// loads (a column past N wraps to the next row's start), every load of the
// thread in flight before its first store. A vector that holds a run's first
// or last bytes but not all of its own is moved element by element at once.
// No epilogue, no cast; elements of E = 1, 2 or 4 bytes (a 32-bit word holds
// whole ones: pack). Element index math is 32-bit where the rows and a run's
// elements fit (I), else 64-bit.
// Variant flatv (WIDE; V = 16) gathers a whole vector from 16-byte loads
// instead: each piece of it that one input row holds (one or two pieces for
// rows of 16 bytes or more, more for shorter ones) comes from the one or two
// aligned 16-byte chunks that hold the piece's bytes, shifted into place
// (at::shift_bytes) and merged under a byte mask: two to four coalesced
// 16-byte loads a vector, where flat makes 16 / E element loads. A chunk is
// loaded only where it holds a byte of its piece, so every load lies within
// the 16 aligned bytes around an input element.
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, V = {{ c.vec_bytes }}, KV = V / E;
  static constexpr int TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int VPT = TC / KV, NTR = NT / TR, CH = NTR * VPT;   // vectors a thread; threads, vectors a run
  static constexpr int ORDER = at::ORDER_ROW;
  static constexpr bool OVERLAP = false, STRIDED = true;
  static constexpr int SMEM = 0;
  static constexpr bool WIDE = {{ 'true' if c.variant == 'flatv' else 'false' }};   // flatv: 16-byte loads (gather)
  static_assert(NT % (32 * TR) == 0 && TC % KV == 0 && VPT >= 1 && V % 4 == 0 && KV >= 2 && (E == 1 || E == 2 || E == 4) &&
                (!WIDE || V == 16), "flat.py's problems()");
  typedef at::Bytes<E>::T WordT;
  typedef at::Bytes<V>::T VecT;

  // Vectors of a run of n elements at most, and the grid of m runs, TR a block (b = 1; flat.py's blocks).
  __host__ __device__ static constexpr long long run_vecs(long long n) { return (n * E + V - 1) / V + 1; }
  __host__ __device__ static constexpr long long grid(long long B, long long M, long long N) {
    return B * ((M + TR - 1) / TR) * ((run_vecs(N) + CH - 1) / CH);
  }

  // The innermost row dimension's size and input stride (kernels.strided.launch_shape's runs).
  __host__ __device__ static __forceinline__ void inner(const at::StridedArgs& a, long long& s0, long long& ss) {
    s0 = 1, ss = 0;
#pragma unroll
    for (int d = 0; d < at::MAX_BATCH; ++d)
      if (d == a.nb - 1) s0 = a.size[d], ss = a.src[d];
  }

  // The grid of a launch with these arguments (the emulator's: at::strided_grid).
  __host__ __device__ static long long strided_grid(const at::StridedArgs& a) {
    long long s0, ss;
    inner(a, s0, ss);
    return grid(1, a.M / s0, a.N * s0);
  }

  // Four bytes from the elements of word k of a vector.
  __host__ __device__ static __forceinline__ uint32_t pack(const WordT (&w)[KV], int k) {
    if constexpr (E == 4) return w[k];
    else if constexpr (E == 2) return (uint32_t)w[2 * k] | (uint32_t)w[2 * k + 1] << 16;
    else return (uint32_t)w[4 * k] | (uint32_t)w[4 * k + 1] << 8 | (uint32_t)w[4 * k + 2] << 16 |
                (uint32_t)w[4 * k + 3] << 24;
  }

  // Bytes below byte x (0..4) of a 32-bit word, as a mask.
  __host__ __device__ static __forceinline__ uint32_t below(int x) { return x >= 4 ? ~0u : (1u << (8 * x)) - 1u; }

  // The aligned 16 bytes at p through the read-only path (WIDE; the compiler does not infer it for
  // these loads); on the host at::ldg, which the emulator watches.
  __host__ __device__ static __forceinline__ uint4 chunk(const char* p) {
#ifdef __CUDA_ARCH__
    return __ldg(reinterpret_cast<const uint4*>(p));
#else
    return at::ldg<uint4>(p);
#endif
  }

  // Bytes [o, o + len) of vector acc (0 <= o, o + len <= 16) from the len input bytes at s (WIDE): the
  // aligned chunks that hold them (one or two; one that holds none is not loaded), shifted so that
  // the byte at s lands on byte o, and merged into acc's words under a byte mask.
  __host__ __device__ static __forceinline__ void piece(uint32_t (&acc)[4], const char* s, int o, int len) {
    const uint32_t d = (uint32_t)(((uintptr_t)s - (uintptr_t)o) & 15);   // acc's byte 0 would be read from A + d
    const char* A = s - o - d;   // from s, not from an integer: the compiler keeps its global space (ld.global.nc)
    uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
    if ((uintptr_t)s < (uintptr_t)A + 16) lo = chunk(A);
    else at::idle_g(0);
    if ((uintptr_t)s + len > (uintptr_t)A + 16) hi = chunk(A + 16);
    else at::idle_g(0);
    const uint4 w = at::shift_bytes(lo, hi, d);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int a = min(max(o - 4 * k, 0), 4), b = min(max(o + len - 4 * k, 0), 4);
      const uint32_t m = below(b) & ~below(a);
      acc[k] = (acc[k] & ~m) | (at::word(w, k) & m);
    }
  }

  // Whole vector acc from element col of the row at s on (rem: that row's bytes from s; row: a row's
  // bytes; wrap: from past a row's end to the next row's start), piece by piece (WIDE).
  __host__ __device__ static __forceinline__ void gather(uint32_t (&acc)[4], const char* s, long long rem,
                                                         long long row, long long wrap) {
    int o = 0;
#pragma unroll
    for (int j = 0; j < 2; ++j) {   // two pieces: every vector of rows of 16 bytes or more
      if (o < V) {
        const int len = (int)(rem < V - o ? rem : V - o);
        piece(acc, s, o, len);
        o += len, s += rem + wrap, rem = row;
      } else {
        at::idle_g(0), at::idle_g(0);
      }
    }
#pragma unroll 1
    while (o < V) {   // rows under 16 bytes: a piece a row
      const int len = (int)(rem < V - o ? rem : V - o);
      piece(acc, s, o, len);
      o += len, s += rem + wrap, rem = row;
    }
  }

  // One thread's share of block blk; I: the index type of rows and a run's elements.
  template <class I>
  __host__ __device__ static __forceinline__ void move(const at::StridedArgs& a, const char* in, char* out,
                                                       uint32_t blk, int tid) {
    long long s0, ss;
    inner(a, s0, ss);
    const long long L = a.N * s0, RB = L * E;   // a run's elements, bytes
    const uint32_t nch = (uint32_t)((run_vecs(L) + CH - 1) / CH);
    const uint32_t pg = blk / nch, ch = blk - pg * nch;
    const long long p = (long long)pg * TR + tid / NTR;   // this thread's run: its warp's
    if (p * s0 >= a.M) return;                            // past the last run: whole warps
    tid %= NTR;
    I x[1] = {(I)(p * s0)};                    // the run's first row
    long long oi[1], oo[1];
    at::batch_offsets<I, 1>(a, x, oi, oo);
    const char* src = in + oi[0];
    char* dst = out + oo[0];
    const long long h = (long long)((uintptr_t)dst & (V - 1));   // the run's start past a V-aligned address
    const I n = (I)a.N;
    const long long wrap = ss - (long long)a.N * E;   // from past a row's end to the next row's start
    WordT w[VPT][KV];
    uint32_t acc[VPT][4];   // WIDE's vectors
    bool whole[VPT];
#pragma unroll
    for (int v = 0; v < VPT; ++v) {   // loads (partial vectors: moved here, element by element)
      const long long b0 = ((long long)ch * CH + v * NTR + tid) * V - h;   // the vector's first byte in the run
      whole[v] = b0 >= 0 && b0 + V <= RB;
      if (whole[v]) {
        const I f = (I)(b0 / E);
        I r = f / n, col = f - r * n;
        const char* s = src + (long long)r * ss + (long long)col * E;
        if constexpr (WIDE) {
          acc[v][0] = acc[v][1] = acc[v][2] = acc[v][3] = 0u;
          gather(acc[v], s, (long long)(n - col) * E, (long long)a.N * E, wrap);
        } else {
#pragma unroll
          for (int t = 0; t < KV; ++t) {
            w[v][t] = at::ldg<WordT>(s);
            s += E;
            if (++col == n) col = 0, s += wrap;
          }
        }
      } else if (b0 < RB && b0 + V > 0) {
#pragma unroll 1
        for (int t = 0; t < KV; ++t) {
          const long long bt = b0 + t * E;
          if (bt < 0 || bt >= RB) continue;
          const I f = (I)(bt / E), r = f / n, col = f - r * n;
          at::stg<WordT>(dst + bt, at::ldg<WordT>(src + (long long)r * ss + (long long)col * E));
        }
      } else {
        at::idle_g(0);
      }
    }
#pragma unroll
    for (int v = 0; v < VPT; ++v) {   // stores
      const long long b0 = ((long long)ch * CH + v * NTR + tid) * V - h;
      if (whole[v]) {
        uint32_t o[V / 4];
#pragma unroll
        for (int k = 0; k < V / 4; ++k) o[k] = WIDE ? acc[v][k % 4] : pack(w[v], k);
        at::stg<VecT>(dst + b0, at::pack<VecT>(o));
      } else {
        at::idle_g(1);
      }
    }
  }

  // at::has_block: the kernel moves its blocks itself.
  __host__ __device__ static __forceinline__ void block(const at::StridedArgs& a, const char* in, char* out,
                                                        uint32_t blk, int tid) {
    if (a.M <= 0xFFFFFFFFll && a.N * a.M <= 0xFFFFFFFFll) move<uint32_t>(a, in, out, blk, tid);
    else move<unsigned long long>(a, in, out, blk, tid);
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
{{ py.args_check }};
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
