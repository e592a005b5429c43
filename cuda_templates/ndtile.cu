// autotrans template: fused tiles, an NdTileProblem of autotrans.core.layout
// (fuse_tile) as autotrans.kernels.strided.nd_args packs it: B matrices of M x N
// fused rows and columns, matrix b at the offsets of batch slots [0, nb)
// (at::batch_offsets, as in every strided kernel). The launch walks them as one
// matrix of B * M rows (row b * M + o: matrix b's row o), so a small M still
// fills the tiles. Fused row o is the m side's dims, innermost first: slots [nb,
// nb + km - 1) hold (size, src, -), ldi is the outermost dim's input stride; its
// elements land contiguously on the output (o * E). Fused column q is the n
// side's dims: slots [nb + km - 1, nb + km + kn - 2) hold (size, -, dst), ldo is
// the outermost dim's output stride; its elements are read q * sci apart.
// size[MAX_BATCH - 1] holds (km - 1) | (kn - 1) << 8 (strided.ND_COUNTS).
// A block moves TR fused rows x TC fused columns through a shared tile in the
// input's orientation (rows of TC + PAD elements: ndtile.py's pad_for keeps both
// phases free of bank conflicts), in three phases split by __syncthreads:
//   0. tables: the first TR threads write their row's input and output offsets,
//      the next TC their column's output offset (mixed radix over the batch's and
//      the side's dims, one 32-bit division a dim where the indices fit in 32
//      bits), after the tile;
//   1. load: threads walk input rows (consecutive threads, consecutive columns);
//      elements of 4 and 8 bytes by cp.async, others with every global
//      load of a thread in flight before its first shared store;
//   2. store: threads walk output rows; every shared load, then the global stores,
//      with the config's epilogue (elements are whole groups: ndtile.py) or its
//      cast (at::cast_vec: shared memory holds input elements, a store writes one
//      EO-byte element; the output's offsets count output bytes).
// The kernel moves its blocks itself (at::has_block). On the GPU each thread runs
// the phases; in the host emulator (AT_EMULATE), thread 0's call runs every thread
// of the block, phase by phase, through the same functions, and the other threads'
// calls do nothing (the emulator calls block once a thread, in order).
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr bool OVERLAP = false, STRIDED = true;
  static constexpr int EPI = at::EPI_{{ c.epilogue | upper }};  // KernelConfig.epilogue (mem.cuh)
  static_assert(at::epi_group(EPI) == {{ c.epilogue_group }},
                "KernelConfig.epilogue_group (Python) disagrees with at::epi_group (C++)");
  static_assert(E % at::epi_group(EPI) == 0, "ndtile.py: elements must be whole epilogue groups");
  static constexpr int CAST = at::CAST_{{ c.cast | replace('>', '_') | upper }}, EO = {{ c.out_elem_bytes }};
  static_assert(at::cast_in<CAST, E>() == E && at::cast_out<CAST, E>() == EO,
                "KernelConfig.elem_bytes / out_elem_bytes (Python) disagree with at::Cast (C++)");
  static constexpr int PAD = {{ c.pad }};
  static constexpr int TILE = TR * (TC + PAD) * E;   // the tile's bytes (ndtile.py's tile_bytes)
  static constexpr int ROWS = (TILE + 7) / 8 * 8;     // then TR rows' input offsets (8 bytes each),
  static constexpr int COLS = ROWS + 8 * TR;          // TC columns' output offsets,
  static constexpr int ROWS_OUT = COLS + 8 * TC;      // the rows' output offsets (each table's
  static constexpr int SMEM = ROWS_OUT + 8 * TR;      // first stores free of bank conflicts)
  static constexpr int PER = TR * TC / NT;            // elements a thread moves
  static constexpr bool ASYNC = E == 4 || E == 8;     // loads by cp.async (ndtile.py's ASYNC_SIZES)
  static constexpr int COUNTS = at::MAX_BATCH - 1;    // the slot of the sides' counts (strided.ND_COUNTS)
  static_assert(TR * TC % NT == 0 && PER >= 1, "ndtile.py: threads must divide the tile");
  typedef at::Bytes<E>::T ElemT;
  typedef at::Bytes<EO>::T OutT;

  // A block's place: the pointers advanced to the tile's first input column
  // (in; the rows' offsets hold the rest) and the output's base (out; the rows'
  // and columns' offsets hold all), the tile's first fused row (of all B * M)
  // and column, and how much of it lies inside the B * M x N rows and columns.
  struct Place {
    const char* in;
    char* out;
    long long r0, c0;
    int rows, cols;
  };

  // Byte offset in shared memory of tile element (fused row r, fused column c).
  __host__ __device__ static __forceinline__ uint32_t off(int r, int c) {
    return (uint32_t)((r * (TC + PAD) + c) * E);
  }

  // The byte offset of index x of a side (at::nd_side; COUNTS slots at most).
  template <class I, bool SRC>
  __host__ __device__ static __forceinline__ long long side(const at::StridedArgs& a, I x, int lo, int hi,
                                                            long long last) {
    static_assert(COUNTS == at::MAX_BATCH - 1, "at::nd_side walks the slots before ND_COUNTS");
    return at::nd_side<I, SRC>(a, x, lo, hi, last);
  }

  // Where block blk works: at::walk over the B * M fused rows of all matrices
  // (matrix b's row o is row b * M + o: a tile may hold rows of two matrices, so
  // a small M fills its tiles) by N fused columns.
  __host__ __device__ static __forceinline__ Place locate(const at::StridedArgs& a, const char* in, char* out,
                                                          uint32_t blk) {
    const long long rows = a.B * a.M;
    uint32_t b, tr, tc;
    at::walk<TR, TC, ORDER>(rows, a.N, blk, b, tr, tc);   // b == 0: one matrix of all rows
    Place p;
    p.r0 = (long long)tr * TR;
    p.c0 = (long long)tc * TC;
    p.in = in + p.c0 * a.sci;
    p.out = out;
    p.rows = rows - p.r0 < TR ? (int)(rows - p.r0) : TR;
    p.cols = a.N - p.c0 < TC ? (int)(a.N - p.c0) : TC;
    return p;
  }

  // Row g's input offset (from its matrix's batch offset and the m side's dims)
  // and output offset (the batch offset and g's place in its matrix, times EO).
  // I: 32 bits where every fused row index fits.
  template <class I>
  __host__ __device__ static __forceinline__ void row(const at::StridedArgs& a, I g, int lo, int mid, long long& oi,
                                                      long long& oo) {
    const I m = (I)a.M;
    I b = g / m;
    const I o = g - b * m;
    oi = side<I, true>(a, o, lo, mid, a.ldi);
    oo = (long long)o * EO;
#pragma unroll
    for (int d = at::MAX_BATCH - 1; d >= 0; --d) {   // b over batch slots [0, nb), innermost last
      if (d < a.nb) {
        const I s = (I)a.size[d], q = d > 0 ? b / s : 0, i = d > 0 ? b - q * s : b;
        oi += (long long)i * a.src[d];
        oo += (long long)i * a.dst[d];
        b = q;
      }
    }
  }

  // Phase 0: thread i < TR writes row r0 + i's input and output offsets, thread
  // TR + j column c0 + j's output offset (those inside the matrix).
  __host__ __device__ static __forceinline__ void tables(const at::StridedArgs& a, const Place& p, char* s, int tid) {
    const int cm = (int)(a.size[COUNTS] & 0xff), cn = (int)((a.size[COUNTS] >> 8) & 0xff);
    const int lo = a.nb, mid = lo + cm, hi = mid + cn;
#pragma unroll
    for (int k = 0; k < (TR + TC + NT - 1) / NT; ++k) {
      const int i = tid + k * NT;
      if (i < p.rows) {
        long long oi, oo;
        if (a.B * a.M <= 0xFFFFFFFFll) row<uint32_t>(a, (uint32_t)(p.r0 + i), lo, mid, oi, oo);
        else row<unsigned long long>(a, (unsigned long long)(p.r0 + i), lo, mid, oi, oo);
        at::sts<long long>(s, ROWS + 8 * i, oi);
        at::sts<long long>(s, ROWS_OUT + 8 * i, oo);
      } else if (i >= TR && i - TR < p.cols) {
        const long long q = p.c0 + (i - TR);
        at::sts<long long>(s, COLS + 8 * (i - TR), a.N <= 0xFFFFFFFFll
                                                       ? side<uint32_t, false>(a, (uint32_t)q, mid, hi, a.ldo)
                                                       : side<unsigned long long, false>(a, q, mid, hi, a.ldo));
      }
    }
  }

  // Phase 1: threads walk input rows. Elements of 4 and 8 bytes go straight
  // to shared memory (cp.async: no registers held while a load is in flight, so
  // a thread may move more); smaller ones: all of a thread's loads, then its
  // shared stores.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::StridedArgs& a, const Place& p, char* s, int tid) {
    if constexpr (ASYNC) {
#pragma unroll
      for (int k = 0; k < PER; ++k) {
        const int i = tid + k * NT, r = i / TC, c = i % TC;
        if (FULL || (r < p.rows && c < p.cols))
          at::cp_async<E>(s, off(r, c), p.in + at::lds<long long>(s, ROWS + 8 * r) + c * a.sci);
        else
          at::idle_g(0);
      }
      at::cp_async_wait();
    } else {
      ElemT v[PER];
#pragma unroll
      for (int k = 0; k < PER; ++k) {
        const int i = tid + k * NT, r = i / TC, c = i % TC;
        if (FULL || (r < p.rows && c < p.cols))
          v[k] = at::ldg<ElemT>(p.in + at::lds<long long>(s, ROWS + 8 * r) + c * a.sci);
        else
          at::idle_g(0);
      }
#pragma unroll
      for (int k = 0; k < PER; ++k) {
        const int i = tid + k * NT, r = i / TC, c = i % TC;
        if (FULL || (r < p.rows && c < p.cols)) at::sts<ElemT>(s, off(r, c), v[k]);
      }
    }
  }

  // Phase 2: threads walk output rows, CHUNK elements at a time: all of a
  // chunk's shared loads, then its stores (a store holds no register once issued).
  static constexpr int CHUNK = PER < 4 ? PER : 4;
  static_assert(PER % CHUNK == 0, "ndtile.py: a thread moves 1, 2 or a multiple of 4 elements");
  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const Place& p, const char* s, int tid) {
#pragma unroll
    for (int k0 = 0; k0 < PER; k0 += CHUNK) {
      ElemT v[CHUNK];
      long long o[CHUNK];
#pragma unroll
      for (int k = 0; k < CHUNK; ++k) {
        const int i = tid + (k0 + k) * NT, c = i / TR, r = i % TR;
        if (FULL || (r < p.rows && c < p.cols)) {
          v[k] = at::lds<ElemT>(s, off(r, c));
          o[k] = at::lds<long long>(s, COLS + 8 * c) + at::lds<long long>(s, ROWS_OUT + 8 * r);
        }
      }
#pragma unroll
      for (int k = 0; k < CHUNK; ++k) {
        const int i = tid + (k0 + k) * NT, c = i / TR, r = i % TR;
        if (FULL || (r < p.rows && c < p.cols))
          at::stg<OutT>(p.out + o[k], at::epilogue<EPI>(at::cast_vec<CAST, ElemT, OutT>(v[k])));
        else at::idle_g(1);
      }
    }
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void phase(int ph, const at::StridedArgs& a, const Place& p, char* s,
                                                        int tid) {
    if (ph == 0) tables(a, p, s, tid);
    else if (ph == 1) load<FULL>(a, p, s, tid);
    else store<FULL>(p, s, tid);
  }

  template <bool FULL>
  __device__ static __forceinline__ void phases(const at::StridedArgs& a, const Place& p, char* s, int tid) {
    tables(a, p, s, tid);
    __syncthreads();
    load<FULL>(a, p, s, tid);
    __syncthreads();
    store<FULL>(p, s, tid);
  }

  // at::has_block: the kernel moves its blocks itself (the tile in the launch's
  // dynamic shared memory of SMEM bytes).
  __host__ __device__ static __forceinline__ void block(const at::StridedArgs& a, const char* in, char* out,
                                                        uint32_t blk, int tid) {
    const Place p = locate(a, in, out, blk);
    const bool full = p.rows == TR && p.cols == TC;
#if defined(__CUDA_ARCH__)
    extern __shared__ __align__(16) char ndtile_smem[];   // the entry's smem (its own name: nvcc warns of
    if (full) phases<true>(a, p, ndtile_smem, tid);        // "linkage conflicts" where a member function
    else phases<false>(a, p, ndtile_smem, tid);            // reuses the entry's)
#elif defined(AT_EMULATE)
    alignas(16) static char smem[SMEM];
    if (tid != 0) return;                              // thread 0's call runs the block
    for (int i = 0; i < SMEM; ++i) smem[i] = (char)0xCD;  // stale shared memory
    const int caller_tid = at::emu_tid, caller_phase = at::emu_phase;
    for (int ph = 0; ph < 3; ++ph)
      for (int t = 0; t < NT; ++t) {
        at::emu_phase = ph, at::emu_tid = t;           // what the shared-memory hook sees
        if (full) phase<true>(ph, a, p, smem, t);
        else phase<false>(ph, a, p, smem, t);
      }
    at::emu_tid = caller_tid, at::emu_phase = caller_phase;  // (the emulator's loop variables)
#else
    (void)full;
#endif
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
{{ py.args_check }};
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
