// autotrans template: transposes with one short side (skinny.py), 16-byte accesses
// at any row and pointer alignment. S: the short side's most elements (narrow:
// TC, the input's columns N <= S; short: TR, its rows M <= S); a block moves L
// (narrow: TR input rows; short: TC input columns) by all n <= S of the short side.
//  narrow  the block's input is one contiguous run of rows * N elements. load
//          copies the aligned 16-byte vectors covering it, as they are, into
//          shared memory; store gathers each aligned 16-byte vector of the N
//          output rows (segments of rows elements) element by element from there.
//          Wide narrow tiles (OWN: S > 32) write only the output vectors that
//          start in their rows, whole (reading XR rows more; a top tile also the
//          rows' heads), so that no vector is written in parts by two blocks.
//  short   the block's output is one contiguous run of cols * M elements. load
//          reads the aligned 16-byte vectors of the M input rows (segments of
//          cols elements) and scatters their elements to their places in the
//          run; store copies the run's aligned 16-byte vectors out as they are.
// Shared memory holds the run: the byte x bytes from the aligned address at or
// below the run's start (short: plus BIAS) at pad(x) = x + 4 * (x / (16 n)) with
// PAD (n: the short side), one word after every 16 n bytes, so that the lanes of
// the element-wise phase, 16 n bytes apart, fall on 32 different banks (the
// division is a multiply-high by ceil(2^32 / (16 n)), exact below 2^23). Each
// block but an OWN one writes exactly the output bytes of its tile: output vectors
// shared with a neighbour are written in parts (at::stg_from, at::stg_upto). Every thread
// takes IT vectors of the run or of the short side's rows, consecutive threads
// consecutive vectors; the one vector past a full tile's (an unaligned run's or
// row's last) is a step of its own. A full tile (n == S and the whole long side)
// knows n at compile time; others read it from the tile. A tile whose run is not
// contiguous (n > S, which skinny.aligned_for refuses) takes the element-wise
// edge path.
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr bool OVERLAP = false;  // see at::locate
  static constexpr bool NARROW = {{ 'true' if c.variant == 'narrow' else 'false' }};  // else short
  static constexpr bool PAD = {{ 'true' if c.pad else 'false' }};
  static constexpr int Q = 16 / E;                  // elements per 16-byte vector
  static constexpr int S = NARROW ? TC : TR, L = NARROW ? TR : TC;
  static constexpr int LV = L * E / 16;             // 16-byte vectors of one long-side segment
  static constexpr int NV = S * LV, IT = NV / NT;   // vectors of a full tile; regular steps per thread
  static constexpr int BIAS = NARROW ? 0 : 16 * S;    // short: room for elements a vector holds outside the tile
  static constexpr bool OWN = NARROW && S > 32;      // wide narrow: owns the output vectors that start in its rows
  static constexpr int XR = OWN ? Q : 0;             // ... so it reads this many rows past its own
  static constexpr int SMEM = (TR + XR) * TC * E + 16 + 2 * BIAS + (PAD ? (L + XR) * E / 4 + 8 : 0);
  static_assert(NV % NT == 0 && IT >= 1 && S <= 512 && S <= NT, "skinny.py: threads divide the tile's vectors");
  typedef at::Bytes<E>::T ElemT;
  typedef uint4 VecT;

  // Byte offset in shared memory of tile element (r, c) on the element-wise edge path.
  __host__ __device__ static __forceinline__ uint32_t off(int r, int c) { return (uint32_t)((r * TC + c) * E); }

  // Whether the tile's run is contiguous: its rows (narrow: input; short: output) are the tile's.
  __host__ __device__ static __forceinline__ bool contiguous(const at::Tile& t) {
    return NARROW ? t.ldi == (long long)t.cols * E : t.ldo == (long long)t.rows * E;
  }

  __host__ __device__ static __forceinline__ uint32_t mulhi(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
  }

  // ceil(2^32 / (16 n)): mulhi(x, magic(n)) == x / (16 n) for every x < 2^23.
  __host__ __device__ static __forceinline__ uint32_t magic(uint32_t n) { return 0xffffffffu / (16u * n) + 1u; }

  // Shared-memory offset of run byte x (n == S on full tiles: a shift).
  template <bool FULL>
  __host__ __device__ static __forceinline__ uint32_t pad(uint32_t x, uint32_t mg) {
    if constexpr (!PAD) return x;
    else return x + 4u * (FULL ? x / (16u * S) : mulhi(x, mg));
  }

  // Element q of a vector in registers (q a compile-time constant after unrolling).
  // (EE: E, as a template parameter, so that if constexpr discards the other sizes.)
  template <int EE = E>
  __host__ __device__ static __forceinline__ typename at::Bytes<EE>::T elem(const VecT& v, int q) {
    if constexpr (EE == 16) return v;
    else if constexpr (EE == 8) return make_uint2(at::word(v, 2 * q), at::word(v, 2 * q + 1));
    else if constexpr (EE == 4) return at::word(v, q);
    else return (typename at::Bytes<EE>::T)(at::word(v, q * EE / 4) >> (8 * (q * EE % 4)));
  }

  // Q elements as a vector.
  template <int EE = E>
  __host__ __device__ static __forceinline__ VecT pack(const typename at::Bytes<EE>::T (&x)[16 / EE]) {
    if constexpr (EE == 16) {
      return x[0];
    } else if constexpr (EE == 8) {
      return make_uint4(at::word(x[0], 0), at::word(x[0], 1), at::word(x[1], 0), at::word(x[1], 1));
    } else if constexpr (EE == 4) {
      return make_uint4(x[0], x[1], x[2], x[3]);
    } else {
      uint32_t o[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if constexpr (EE == 2) o[j] = at::perm(x[2 * j], x[2 * j + 1], 0x5410);
        else o[j] = at::perm(at::perm(x[4 * j], x[4 * j + 1], 0x0040), at::perm(x[4 * j + 2], x[4 * j + 3], 0x0040),
                             0x5410);
      }
      return at::pack<VecT>(o);
    }
  }

  // One element from / to shared memory at byte offset o (a multiple of min(E, 4)).
  template <int EE = E>
  __host__ __device__ static __forceinline__ typename at::Bytes<EE>::T lde(const char* s, uint32_t o) {
    if constexpr (EE < 4) return at::lds<typename at::Bytes<EE>::T>(s, o);
    else if constexpr (EE == 4) return at::lds<uint32_t>(s, o);
    else if constexpr (EE == 8) return make_uint2(at::lds<uint32_t>(s, o), at::lds<uint32_t>(s, o + 4));
    else return make_uint4(at::lds<uint32_t>(s, o), at::lds<uint32_t>(s, o + 4), at::lds<uint32_t>(s, o + 8),
                           at::lds<uint32_t>(s, o + 12));
  }

  template <int EE = E>
  __host__ __device__ static __forceinline__ void ste(char* s, uint32_t o, typename at::Bytes<EE>::T v) {
    if constexpr (EE < 4) {
      at::sts<ElemT>(s, o, v);
    } else {
#pragma unroll
      for (int j = 0; j < E / 4; ++j) at::sts<uint32_t>(s, o + 4 * j, at::word(v, j));
    }
  }

  // A run vector: 16 bytes at shared offset pad(x) (x a multiple of 16). With PAD,
  // four words, word j at step (j - rot) & 3: rot = (tid / 8) % 4 spreads the
  // steps of a warp whose vectors fall in few padding groups (n > 16) over the banks.
  __host__ __device__ static __forceinline__ uint32_t rot_of(int tid, int n) {
    return PAD && S > 16 && n > 16 ? (uint32_t)(tid >> 3) & 3u : 0u;
  }

  __host__ __device__ static __forceinline__ VecT ldv(const char* s, uint32_t o, uint32_t rot) {
    if constexpr (!PAD) {
      return at::lds<VecT>(s, o);
    } else {
      uint32_t x[4], w[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) x[t] = at::lds<uint32_t>(s, o + 4 * ((t + rot) & 3u));
#pragma unroll
      for (int j = 0; j < 4; ++j) {  // word j was read at step (j - rot) & 3
        uint32_t k = (j - rot) & 3u;
        w[j] = k == 0 ? x[0] : k == 1 ? x[1] : k == 2 ? x[2] : x[3];
      }
      return at::pack<VecT>(w);
    }
  }

  __host__ __device__ static __forceinline__ void stv(char* s, uint32_t o, const VecT& v, uint32_t rot) {
    if constexpr (!PAD) {
      at::sts<VecT>(s, o, v);
    } else {
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        uint32_t j = (t + rot) & 3u;
        at::sts<uint32_t>(s, o + 4 * j, at::word_at(v, j));
      }
    }
  }

  // Bytes [lo, hi) of vector v to its aligned home p (hi > lo, both multiples of E).
  __host__ __device__ static __forceinline__ void put(char* p, const VecT& v, uint32_t lo, uint32_t hi) {
    if (lo == 0 && hi >= 16) {
      at::stg<VecT>(p, v);
      at::idle_pieces<VecT>(), at::idle_pieces<VecT>(), idle_elems();
    } else if (hi >= 16) {
      at::idle_g(1), at::stg_from(p, v, lo);
      at::idle_pieces<VecT>(), idle_elems();
    } else if (lo == 0) {
      at::idle_g(1), at::idle_pieces<VecT>(), at::stg_upto(p, v, hi);
      idle_elems();
    } else {
      at::idle_g(1), at::idle_pieces<VecT>(), at::idle_pieces<VecT>();
#pragma unroll
      for (int q = 0; q < Q; ++q)
        if (lo <= (uint32_t)(q * E) && (uint32_t)(q * E) < hi) at::stg<ElemT>(p + q * E, elem(v, q));
        else at::idle_g(1);
    }
  }

  // What a lane that stores none of put()'s Q elements does (the emulator's count, at::idle_g).
  __host__ __device__ static __forceinline__ void idle_elems() {
#pragma unroll
    for (int q = 0; q < Q; ++q) at::idle_g(1);
  }

  // -- narrow: copy the input run in, gather the output rows' vectors ------------

  template <bool FULL>
  __host__ __device__ static __forceinline__ void copy_in(const at::Tile& t, char* s, int tid) {
    const uint32_t n = FULL ? S : t.cols, mg = magic(n), s0 = (uint32_t)(uintptr_t)t.in & 15u;
    const uint32_t nv = (s0 + (FULL ? TR : t.rows) * n * E + 15u) >> 4;  // vectors covering the run
    const char* base = t.in - s0;
    const uint32_t rot = rot_of(tid, n);
    VecT w[IT], x;
#pragma unroll
    for (int k = 0; k < IT; ++k) {  // every load in flight before the first store
      uint32_t i = tid + k * NT;
      if (FULL || i < nv) w[k] = at::ldg<VecT>(base + 16 * i); else at::idle_g(0);
    }
    if (tid == 0 && nv > NV) x = at::ldg<VecT>(base + 16 * NV);  // an unaligned run's last vector
    else at::idle_g(0);
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      uint32_t i = tid + k * NT;
      if (FULL || i < nv) stv(s, pad<FULL>(16 * i, mg), w[k], rot);
    }
    if (tid == 0 && nv > NV) stv(s, pad<FULL>(16 * NV, mg), x, rot);
  }

  // -- wide narrow (OWN): the run and XR rows more, each output row's vectors
  // that start in the tile's rows ----------------------------------------------

  // Input rows of the run: the tile's and up to XR more of its matrix.
  template <bool FULL>
  __host__ __device__ static __forceinline__ uint32_t run_rows(const at::Tile& t) {
    const uint32_t rows = FULL ? TR : t.rows;
    return t.left < (long long)(rows + XR) ? (uint32_t)t.left : rows + XR;
  }

  // copy_in of the longer run: its vectors past a full tile's (S more and one) are two steps more.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void own_in(const at::Tile& t, char* s, int tid) {
    const uint32_t n = FULL ? S : t.cols, mg = magic(n), s0 = (uint32_t)(uintptr_t)t.in & 15u;
    const uint32_t nv = (s0 + run_rows<FULL>(t) * n * E + 15u) >> 4;  // vectors covering the run
    const char* base = t.in - s0;
    const uint32_t rot = rot_of(tid, n), i1 = NV + tid, i2 = NV + NT + tid;
    VecT w[IT], x, y;
#pragma unroll
    for (int k = 0; k < IT; ++k) {  // every load in flight before the first store
      uint32_t i = tid + k * NT;
      if (FULL || i < nv) w[k] = at::ldg<VecT>(base + 16 * i); else at::idle_g(0);
    }
    if (i1 < nv) x = at::ldg<VecT>(base + 16 * i1); else at::idle_g(0);
    if (i2 < nv) y = at::ldg<VecT>(base + 16 * i2); else at::idle_g(0);
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      uint32_t i = tid + k * NT;
      if (FULL || i < nv) stv(s, pad<FULL>(16 * i, mg), w[k], rot);
    }
    if (i1 < nv) stv(s, pad<FULL>(16 * i1, mg), x, rot);
    if (i2 < nv) stv(s, pad<FULL>(16 * i2, mg), y, rot);
  }

  // Output row c's elements r0 .. r0 + Q - 1. CLAMP: rows outside the tile are
  // read Q rows in (where the neighbouring lane reads: the same word), else clamped.
  template <bool FULL, bool CLAMP>
  __host__ __device__ static __forceinline__ VecT gather(const char* s, int r0, int c, int n, int rows, uint32_t s0,
                                                         uint32_t mg) {
    ElemT x[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int r = r0 + q;
      if (CLAMP) {
        r = r < 0 ? r + Q : r >= rows ? r - Q : r;
        r = r < 0 ? 0 : r < rows ? r : rows - 1;
      }
      x[q] = lde(s, pad<FULL>(s0 + (uint32_t)(r * n + c) * E, mg));
    }
    return pack(x);
  }

  // Aligned vector v of output row c (from the aligned address at or below the
  // row's first byte of this tile): what of it lies in the tile.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void out_row_vec(const at::Tile& t, const char* s, int c, int v, int n,
                                                              int rows, uint32_t s0, uint32_t mg) {
    char* o = t.out + (unsigned long long)(uint32_t)c * t.ldo;
    const int a = (int)((uintptr_t)o & 15), start = 16 * v - a, end = rows * E;  // bytes from o
    if (start >= end) return;
    VecT x = start >= 0 && start + 16 <= end ? gather<FULL, false>(s, start / E, c, n, rows, s0, mg)
                                             : gather<FULL, true>(s, start / E, c, n, rows, s0, mg);
    put(o - a + 16 * v, x, start < 0 ? (uint32_t)-start : 0u, (uint32_t)(end - start));
  }

  // OWN: output row c's bytes [start, start + 16) from the tile's first (start + a
  // a multiple of 16; negative: the row's head vector), within the run's ext rows.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void own_vec(const at::Tile& t, const char* s, int c, int start, int n,
                                                          int ext, uint32_t s0, uint32_t mg) {
    char* o = t.out + (unsigned long long)(uint32_t)c * t.ldo;
    const int end = ext * E;
    VecT x = start >= 0 && start + 16 <= end ? gather<FULL, false>(s, start / E, c, n, ext, s0, mg)
                                             : gather<FULL, true>(s, start / E, c, n, ext, s0, mg);
    put(o + start, x, start < 0 ? (uint32_t)-start : 0u, (uint32_t)(end - start));
  }

  // OWN: each output row's aligned vectors that start in the tile's rows (the
  // last ones reach into the run's XR rows more; the matrix's last row ends
  // them), and a top tile's row heads (the vector before the first that starts).
  template <bool FULL>
  __host__ __device__ static __forceinline__ void own_out(const at::Tile& t, const char* s, int tid) {
    const int n = FULL ? S : t.cols, rows = FULL ? TR : t.rows, ext = (int)run_rows<FULL>(t);
    const uint32_t mg = magic(n), s0 = (uint32_t)(uintptr_t)t.in & 15u;
#pragma unroll
    for (int k = 0; k < IT; ++k) {  // consecutive threads: consecutive vectors of one output row
      int i = tid + k * NT, c = i / LV, v = i % LV;
      int a = (int)((uintptr_t)(t.out + (unsigned long long)(uint32_t)c * t.ldo) & 15), start = ((16 - a) & 15) + 16 * v;
      if ((FULL || c < n) && (FULL || start < rows * E)) own_vec<FULL>(t, s, c, start, n, ext, s0, mg);
    }
    if (t.top && tid < n) {
      int a = (int)((uintptr_t)(t.out + (unsigned long long)(uint32_t)tid * t.ldo) & 15);
      if (a) own_vec<FULL>(t, s, tid, -a, n, ext, s0, mg);
    }
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void gather_out(const at::Tile& t, const char* s, int tid) {
    const int n = FULL ? S : t.cols, rows = FULL ? TR : t.rows;
    const uint32_t mg = magic(n), s0 = (uint32_t)(uintptr_t)t.in & 15u;
#pragma unroll
    for (int k = 0; k < IT; ++k) {  // consecutive threads: consecutive vectors of one output row
      int i = tid + k * NT, c = i / LV, v = i % LV;
      if (FULL || c < n) out_row_vec<FULL>(t, s, c, v, n, rows, s0, mg);
    }
    if (tid < n) out_row_vec<FULL>(t, s, tid, LV, n, rows, s0, mg);  // an unaligned row's last vector
  }

  // -- short: scatter the input rows' vectors into the output run, copy it out ---

  // Aligned vector v of input row r (from the aligned address at or below the
  // row's first byte of this tile), scattered into the run. Its elements outside
  // the tile (columns c < 0 or >= cols) land outside the run, in the BIAS bytes
  // before it or past its end, which copy_out never stores: no lane skips a step.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void scatter(char* s, const VecT& w, int r, int v, int a, int m,
                                                          uint32_t s0, uint32_t mg) {
    const int c0 = (16 * v - a) / E;  // the vector's first column (negative: before the tile's)
#pragma unroll
    for (int q = 0; q < Q; ++q)
      ste(s, pad<FULL>((uint32_t)(BIAS + (int)s0 + ((c0 + q) * m + r) * E), mg), elem(w, q));
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void scatter_in(const at::Tile& t, char* s, int tid) {
    const int m = FULL ? S : t.rows, cols = FULL ? TC : t.cols;
    const uint32_t mg = magic(m), s0 = (uint32_t)(uintptr_t)t.out & 15u;
    VecT w[IT], x;
#pragma unroll
    for (int k = 0; k < IT; ++k) {  // every load in flight before the first store
      int i = tid + k * NT, r = i / LV, v = i % LV;
      const char* p = t.in + (unsigned long long)(uint32_t)r * t.ldi;
      int a = (int)((uintptr_t)p & 15);
      if ((FULL || r < m) && (FULL || 16 * v < a + cols * E)) w[k] = at::ldg<VecT>(p - a + 16 * v);
      else at::idle_g(0);
    }
    const char* px = t.in + (unsigned long long)(uint32_t)tid * t.ldi;  // an unaligned row's last vector
    const int ax = (int)((uintptr_t)px & 15);
    const bool extra = tid < m && 16 * LV < ax + cols * E;
    if (extra) x = at::ldg<VecT>(px - ax + 16 * LV); else at::idle_g(0);
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      int i = tid + k * NT, r = i / LV, v = i % LV;
      int a = (int)((uintptr_t)(t.in + (unsigned long long)(uint32_t)r * t.ldi) & 15);
      if ((FULL || r < m) && (FULL || 16 * v < a + cols * E)) scatter<FULL>(s, w[k], r, v, a, m, s0, mg);
    }
    if (extra) scatter<FULL>(s, x, tid, LV, ax, m, s0, mg);
  }

  // Aligned output vector i of the run (from the aligned address at or below its first byte).
  template <bool FULL>
  __host__ __device__ static __forceinline__ void out_run_vec(const at::Tile& t, const char* s, uint32_t i,
                                                              uint32_t s0, uint32_t end, uint32_t mg, uint32_t rot) {
    VecT v = ldv(s, pad<FULL>(BIAS + 16 * i, mg), rot);
    put(t.out - s0 + 16 * i, v, 16 * i < s0 ? s0 - 16 * i : 0u, end - 16 * i);
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void copy_out(const at::Tile& t, const char* s, int tid) {
    const uint32_t m = FULL ? S : t.rows, mg = magic(m), s0 = (uint32_t)(uintptr_t)t.out & 15u;
    const uint32_t end = s0 + (FULL ? TC : t.cols) * m * E, nv = (end + 15u) >> 4;  // from t.out - s0
    const uint32_t rot = rot_of(tid, m);
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      uint32_t i = tid + k * NT;
      if (FULL || i < nv) out_run_vec<FULL>(t, s, i, s0, end, mg, rot);
    }
    if (tid == 0 && nv > NV) out_run_vec<FULL>(t, s, NV, s0, end, mg, rot);  // an unaligned run's last vector
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char* s, int tid) {
    if (!contiguous(t)) at::load_elems<{{ name }}_k>(t, s, tid);
    else if constexpr (OWN) own_in<FULL>(t, s, tid);
    else if constexpr (NARROW) copy_in<FULL>(t, s, tid);
    else scatter_in<FULL>(t, s, tid);
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const at::Tile& t, const char* s, int tid) {
    if (!contiguous(t)) at::store_elems<{{ name }}_k>(t, s, tid);
    else if constexpr (OWN) own_out<FULL>(t, s, tid);
    else if constexpr (NARROW) gather_out<FULL>(t, s, tid);
    else copy_out<FULL>(t, s, tid);
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
AT_AGREE_ARGS({{ py.args_size }}, {{ py.args_offsets | join(", ") }});
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
