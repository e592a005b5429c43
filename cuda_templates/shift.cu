// autotrans template: the vectorised tile for rows at any byte alignment.
// Three phases, each on aligned 16-byte global accesses:
//  load  copies the aligned 16-byte vectors that cover each tile row, as they
//        are, into "raw" shared-memory rows (cp.async: no registers in flight);
//  mid   reads each row's K-element vectors at the row's byte offset (five
//        4-byte words and funnel shifts; four words for 4-byte elements),
//        transposes R rows of them in registers (__byte_perm) and stores K
//        chunks of R elements to the transposed tile (smem row c = output row c);
//  store reads each aligned output vector at its output row's byte offset
//        from the transposed tile (five words, funnel shifts) and writes it.
// A tile owns the aligned output vectors that start inside its output rows, so
// it reads KO more input rows (XR) and no output vector is shared between
// tiles; only the ends of whole output rows are written in parts. Dense last
// tiles overlap their neighbours (at::locate), so only matrices narrower or
// shorter than a tile take the element-wise edge path. Strided last tiles do not
// overlap (an N-d order's rows are often a few hundred bytes: an overlapping
// tile re-reads a whole tile's sectors for its few new columns); their edge
// tiles take the three phases in rolled loops that load only vectors holding
// valid columns and store only valid output rows (edge_vectors), element-wise
// where the tile's output rows hold less than a vector. Chunks are one 32-bit word
// (R * E == 4). Strided configs may cast (KernelConfig.cast, 1- to 4-byte elements
// both sides): the tiles hold input elements, the store phase reads the KO = V / EO
// input elements of each aligned output vector (VI bytes, at the output offset's
// element) and converts them in registers (at::cast_vec); a tile reads KO more rows. Transposed rows are PAD elements longer and, with XOR set,
// each group of K rows starts SKEW words later, so that the mid phase's chunk
// stores of one warp fall on 32 different banks.
// Strips may write seams (KernelConfig.seam, SEAM): where output rows follow one another
// along a batch dimension, the top tile of the later row also reads the earlier
// matrix's last XS rows (seam_load, seam_mid: rows -XS..-1 of the transposed tile) and writes
// the vector the two rows share whole; the earlier row's bottom tile leaves it (Seam, seam_of).
// Strided configs may move strips (KernelConfig.strip = STRIP > 1): a block moves
// STRIP tiles side by side along its input rows, one after another (run_strip:
// at::locate_strided places the strip as one tile STRIP times wider, at::strip_tile its tiles).
// Their raw rows start at the 32-byte sector (GR) that holds the tile row's first
// byte, and load whole sectors, so a tile row's last sector is the next tile's
// first: it moves to the raw row's start in shared memory (the ring) instead of
// being read again, and the next tile's loads are in flight while a tile stores.
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, V = {{ c.vec_bytes }}, R = {{ c.micro_rows }}, K = V / E;
  static constexpr int CAST = at::CAST_{{ c.cast | replace('>', '_') | upper }}, EO = {{ c.out_elem_bytes }};
  static constexpr int KO = V / EO, VI = KO * E;   // an output vector's elements, and their input bytes
  static_assert(at::cast_in<CAST, E>() == E && at::cast_out<CAST, E>() == EO && EO <= 4,
                "KernelConfig.elem_bytes / out_elem_bytes (Python) disagree with at::Cast, or EO > 4");
  static constexpr int TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr int PAD = {{ c.pad }};
  static constexpr bool XOR = {{ 'true' if c.swizzle == 'xor' else 'false' }};
  static constexpr bool MID = true;
  static constexpr bool STRIDED = {{ 'true' if c.layout == 'strided' else 'false' }};  // takes at::StridedArgs (sci == E)
  static constexpr bool OVERLAP = !STRIDED;         // see the header: dense last tiles overlap, strided ones do not
  static constexpr int XR = KO, ROWS = TR + XR;     // input rows read: the tile's and KO more
  static constexpr int STRIP = {{ c.strip }};        // tiles a block moves (KernelConfig.strip; run_strip)
  static constexpr bool SEAM = {{ 'true' if c.seam else 'false' }};  // KernelConfig.seam (run_strip, seam_of)
  static constexpr bool TABLES = {{ 'true' if c.variant == 'ndshift' else 'false' }};  // ndshift: run_tables
  static constexpr int XS = SEAM ? KO : 0;          // rows of the previous matrix a seam tile reads
  static constexpr int GR = STRIP > 1 ? 32 : V;    // a raw row starts at a multiple of GR bytes
  static constexpr int NVR = TC * E / V + GR / V;  // raw vectors per row (GR more: any alignment)
  static constexpr int RAWB = NVR * V, RAW = (ROWS + XS) * RAWB;
  static constexpr int NVC = TC / K, G = 32 / NVC; // vectors per tile row; words per lane group
  static constexpr int W = (XS + ROWS + PAD) * E / 4;  // words per transposed row
  static constexpr int SKEW = XOR ? ((G - K * W) % 32 + 32) % 32 : 0;  // words added per K-row group
  static constexpr int ROWB = W * 4, TILE_END = RAW + TC * ROWB + 4 * SKEW * (NVC - 1);
  static constexpr int TAB = (TILE_END + 7) / 8 * 8;  // ndshift: ROWS rows' input offsets, TC columns' output offsets
  static constexpr int SMEM = TABLES ? TAB + 8 * (ROWS + TC) : TILE_END;
  static constexpr int IT1 = (ROWS * NVR + NT - 1) / NT, IT2 = (ROWS / R * NVC + NT - 1) / NT;
  static constexpr int IT3 = TC * (TR / KO) / NT;
  static_assert(R * E == 4 && V == 16 && NVC <= 32, "shift chunks are one word, vectors 16 bytes");
  static_assert(STRIP == 1 || (STRIDED && TC * E % GR == 0), "shift.py: strips are strided, tile rows whole sectors");
  static_assert(!SEAM || STRIP > 1, "KernelConfig: seams are written by strips");
  static_assert(!TABLES || (STRIDED && STRIP == 1 && CAST == at::CAST_NONE), "shift.py: ndshift moves, one tile a block");
  typedef at::Bytes<E>::T ElemT;
  typedef uint4 VecT;                              // an output vector
  typedef at::Bytes<VI>::T VecIT;                  // its input elements (VecT without a cast)

  // Byte offset in shared memory of transposed-tile element (input row r, input column c);
  // rows -XS..-1: the previous matrix's last rows (seams).
  __host__ __device__ static __forceinline__ uint32_t off(int r, int c) {
    return (uint32_t)(RAW + c * ROWB + (c / K) * 4 * SKEW + (r + XS) * E);
  }

  // A strip's seams (KernelConfig.seam): where its matrices' output rows follow one
  // another along a batch dimension (output stride M * EO, rows of at least two
  // vectors), delta is that dimension's input stride; pred: the strip's rows have
  // a previous row there (the strip's top tiles read its last XS rows and write
  // the vector the two rows share whole), succ: a next one (whose top tile writes
  // it: the strip's bottom tile leaves it).
  struct Seam {
    long long delta;
    bool pred, succ;
  };
  static constexpr Seam NO_SEAM = {0, false, false};

  __host__ __device__ static __forceinline__ Seam seam_of(const at::StridedArgs& a, uint32_t blk) {
    Seam sm = NO_SEAM;
    if constexpr (SEAM) {
      const long long row = a.M * EO;
      if (row < 2 * V) return sm;
      unsigned long long b = blk / (at::tiles<TR>(a.M) * at::tiles<TC * STRIP>(a.N)), inner = 1;
#pragma unroll 1
      for (int d = a.nb - 1; d >= 0; --d) {
        const unsigned long long n = (unsigned long long)a.size[d];
        if (a.dst[d] == row && n > 1) {
          const unsigned long long i = b / inner % n;
          sm.delta = a.src[d], sm.pred = i > 0, sm.succ = i + 1 < n;
          break;
        }
        inner *= n;
      }
    }
    return sm;
  }

  // Input rows from the tile's first to the matrix's last, at most ROWS: 32-bit.
  __host__ __device__ static __forceinline__ int rows_left(const at::Tile& t) {
    return t.left < ROWS ? (int)t.left : ROWS;
  }

  // Whether the tile starts at its matrix's first row (dense: left == M, so M * E == ldo).
  __host__ __device__ static __forceinline__ bool first(const at::Tile& t) {
    if constexpr (STRIDED) return t.top; else return t.left * E == t.ldo;
  }

  // Whether a strided edge tile moves vectors (load_edge, mid_group, store_vector):
  // its output rows hold at least one vector, so their first partial piece fits.
  __host__ __device__ static __forceinline__ bool edge_vectors(const at::Tile& t) { return t.left >= KO; }

  // Input row r of the tile's first byte (rows past the matrix's last repeat
  // it): ndshift's from its table (TAB), else r pitches on.
  __host__ __device__ static __forceinline__ const char* in_row(const at::Tile& t, const char* s, int r) {
    if constexpr (TABLES) return t.in + at::lds<long long>(s, (uint32_t)(TAB + 8 * r));
    else return t.in + (unsigned long long)(uint32_t)(r < rows_left(t) ? r : rows_left(t) - 1) * t.ldi;
  }

  // Output row c (the tile's column c) from the tile's first row on: ndshift's from its table.
  __host__ __device__ static __forceinline__ char* out_col(const at::Tile& t, const char* s, uint32_t c) {
    if constexpr (TABLES) return t.out + at::lds<long long>(s, (uint32_t)(TAB + 8 * (ROWS + c)));
    else return t.out + c * t.ldo;
  }

  // ndshift: block blk's tile of an NdTileProblem (B matrices, at the offsets of
  // batch slots [0, nb), of M fused rows, each a contiguous input run, by N fused
  // columns, each a contiguous output run: kernels.strided.nd_args' encoding;
  // tiles do not span matrices, kernels.strided.launch_shape). Its rows' input
  // offsets and its columns' output offsets are summed once a block into tables
  // after the tile (tables), then the phases run as for a strided TileProblem's
  // tile. In the host emulator thread 0's call runs every thread, phase by phase
  // (emu_phase 3: tables, then 0-2: load, mid, store), and the others' do nothing.
  __host__ __device__ static __forceinline__ void run_tables(const at::StridedArgs& a, const char* in, char* out,
                                                            uint32_t blk, int tid, char* s) {
    uint32_t b, tr, tc;
    at::walk<TR, TC, ORDER>(a.M, a.N, blk, b, tr, tc);
    const long long r0 = (long long)tr * TR, c0 = (long long)tc * TC;
    long long boi[1], boo[1];
    uint32_t x[1] = {b};    // b < 2^31: the grid's limit
    at::batch_offsets<uint32_t, 1>(a, x, boi, boo);
    at::Tile t;
    t.ldi = t.ldo = 0;
    t.sci = E;
    t.in = in + boi[0] + c0 * E;     // + a row's input offset (TAB)
    t.out = out + boo[0] + r0 * E;   // + a column's output offset (TAB + 8 * ROWS)
    at::extent<TR, TC>(a.M, a.N, r0, c0, t);
    const bool full = t.rows == TR && t.cols == TC;
#if defined(__CUDA_ARCH__)
    tables(a, r0, c0, s, tid);
    __syncthreads();
    if (full) at::phases<{{ name }}_k, true>(t, s); else at::phases<{{ name }}_k, false>(t, s);
#elif defined(AT_EMULATE)
    if (tid != 0) return;
    for (int i = 0; i < SMEM; ++i) s[i] = (char)0xCD;   // stale shared memory
    const int caller_tid = at::emu_tid, caller_phase = at::emu_phase;
    for (int ph : {3, 0, 1, 2}) {
      at::emu_phase = ph;
      for (int u = 0; u < NT; ++u) {
        at::emu_tid = u;
        if (ph == 3) tables(a, r0, c0, s, u);
        else if (ph == 0 && full) load<true>(t, s, u);
        else if (ph == 0) load<false>(t, s, u);
        else if (ph == 1 && full) mid<true>(t, s, u);
        else if (ph == 1) mid<false>(t, s, u);
        else if (full) store<true>(t, s, u);
        else store<false>(t, s, u);
      }
    }
    at::emu_tid = caller_tid, at::emu_phase = caller_phase;   // (the emulator's loop variables)
#else
    (void)a, (void)s, (void)tid, (void)full;
#endif
  }

  // ndshift's tables: thread i < ROWS writes row r0 + i's input offset, thread
  // ROWS + j column c0 + j's output offset (rows and columns past the matrix's
  // last repeat it), from the m and n sides' dims (at::nd_side, as ndtile.cu's).
  __host__ __device__ static __forceinline__ void tables(const at::StridedArgs& a, long long r0, long long c0, char* s,
                                                        int tid) {
    const long long counts = a.size[at::MAX_BATCH - 1];
    const int lo = a.nb, mid = lo + (int)(counts & 0xff), hi = mid + (int)((counts >> 8) & 0xff);
#pragma unroll 1
    for (int i = tid; i < ROWS + TC; i += NT) {
      long long o;
      if (i < ROWS) {
        const long long g = r0 + i < a.M ? r0 + i : a.M - 1;
        o = a.M <= 0xFFFFFFFFll ? at::nd_side<uint32_t, true>(a, (uint32_t)g, lo, mid, a.ldi)
                                : at::nd_side<unsigned long long, true>(a, (unsigned long long)g, lo, mid, a.ldi);
      } else {
        const long long q = c0 + (i - ROWS) < a.N ? c0 + (i - ROWS) : a.N - 1;
        o = a.N <= 0xFFFFFFFFll ? at::nd_side<uint32_t, false>(a, (uint32_t)q, mid, hi, a.ldo)
                                : at::nd_side<unsigned long long, false>(a, (unsigned long long)q, mid, hi, a.ldo);
      }
      at::sts<long long>(s, (uint32_t)(TAB + 8 * i), o);
    }
  }

  // ndshift's element-wise paths (edge tiles of fewer rows than an output vector).
  __host__ __device__ static __forceinline__ void load_elems_nd(const at::Tile& t, char* s, int tid) {
    for (int i = tid; i < TR * TC; i += NT) {
      const int r = i / TC, c = i % TC;
      if (r < t.rows && c < t.cols) at::sts<ElemT>(s, off(r, c), at::ldg<ElemT>(in_row(t, s, r) + c * E));
      else at::idle_g(0);
    }
  }

  __host__ __device__ static __forceinline__ void store_elems_nd(const at::Tile& t, const char* s, int tid) {
    for (int i = tid; i < TR * TC; i += NT) {
      const int c = i / TR, r = i % TR;
      if (r < t.rows && c < t.cols) at::stg<ElemT>(out_col(t, s, (uint32_t)c) + (long long)r * E, at::lds<ElemT>(s, off(r, c)));
      else at::idle_g(1);
    }
  }

  // Bytes of the transposed tile's input elements before output byte d (a multiple of EO).
  __host__ __device__ static __forceinline__ uint32_t in_bytes(uint32_t d) {
    if constexpr (EO == E) return d; else if constexpr (EO < E) return d * (E / EO); else return d / (EO / E);
  }

  // Byte misalignment of tile row r (rows past the matrix's last repeat it).
  __host__ __device__ static __forceinline__ uint32_t shift_of(const at::Tile& t, const char* s, int r) {
    if constexpr (TABLES) {
      return (uint32_t)(uintptr_t)in_row(t, s, r) & (GR - 1);
    } else {
      r = r < rows_left(t) ? r : rows_left(t) - 1;
      return ((uint32_t)(uintptr_t)t.in + (uint32_t)r * (uint32_t)t.ldi) & (GR - 1);
    }
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char* s, int tid) {
    if constexpr (FULL) {
#pragma unroll
      for (int k = 0; k < IT1; ++k) {
        int i = tid + k * NT, r = i / NVR, v = i % NVR;
        if (ROWS * NVR % NT == 0 || i < ROWS * NVR) {
          const char* p = TABLES ? in_row(t, s, r) : t.in + (unsigned long long)(uint32_t)(r < rows_left(t) ? r : rows_left(t) - 1) * t.ldi;
          uint32_t sh = (uint32_t)(uintptr_t)p & (V - 1);
          if (v < NVR - 1 || sh) at::cp_async16(s, (uint32_t)(r * RAWB + v * V), p - sh + v * V); else at::idle_g(0);
        }
      }
      at::cp_async_wait();
    } else if constexpr (!OVERLAP) {
      if (edge_vectors(t)) load_edge(t, s, tid);
      else if constexpr (TABLES) load_elems_nd(t, s, tid);
      else at::load_elems<{{ name }}_k>(t, s, tid);
    } else {
      at::load_elems<{{ name }}_k>(t, s, tid);
    }
  }

  // load for an edge tile: the raw vectors that hold any of the tile's t.cols columns.
  __host__ __device__ static __forceinline__ void load_edge(const at::Tile& t, char* s, int tid) {
    const uint32_t valid = (uint32_t)t.cols * E;
#pragma unroll 1
    for (int i = tid; i < ROWS * NVR; i += NT) {
      int r = i / NVR, v = i % NVR;
      const char* p = TABLES ? in_row(t, s, r) : t.in + (unsigned long long)(uint32_t)(r < rows_left(t) ? r : rows_left(t) - 1) * t.ldi;
      uint32_t sh = (uint32_t)(uintptr_t)p & (V - 1);
      const bool row = !TABLES || r < rows_left(t);   // ndshift: rows past the matrix's last are not read again
      if (row && (uint32_t)(v * V) < sh + valid) at::cp_async16(s, (uint32_t)(r * RAWB + v * V), p - sh + v * V);
      else at::idle_g(0);
    }
    at::cp_async_wait();
  }

  // load for a strip's tile: the sectors that hold any of the tile's columns,
  // as 16-byte vectors, from the sector that holds each row's first byte (FULL:
  // all TC columns). ring: the previous tile of the strip is in the raw rows; each
  // row's last sector moves to its start (where the row is not sector-aligned, it
  // is this tile's first) and is not read again. No wait: the caller waits.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void strip_load(const at::Tile& t, char* s, int tid, bool ring) {
    const uint32_t valid = FULL ? (uint32_t)(TC * E) : (uint32_t)t.cols * E;
#pragma unroll
    for (int k = 0; k < IT1; ++k) {
      int i = tid + k * NT, r = i / NVR, v = i % NVR;
      if (ROWS * NVR % NT == 0 || i < ROWS * NVR) {
        const char* p = t.in + (unsigned long long)(uint32_t)(r < rows_left(t) ? r : rows_left(t) - 1) * t.ldi;
        const uint32_t sh = (uint32_t)(uintptr_t)p & (GR - 1), o = (uint32_t)(r * RAWB + v * V);
        if (ring && sh && v >= NVR - GR / V) at::sts<VecT>(s, o - TC * E, at::lds<VecT>(s, o));
        if (!(ring && sh && v < GR / V) && (uint32_t)(v * V / GR * GR) < sh + valid)
          at::cp_async16(s, o, p - sh + v * V);
        else
          at::idle_g(0);
      }
    }
  }

  // The previous matrix's last XS rows of the tile's columns (seams: delta back
  // from the tile's own rows), into raw rows ROWS on, whole sectors as
  // strip_load<false> loads them, without the ring. No wait: the caller waits.
  __host__ __device__ static __forceinline__ void seam_load(const at::Tile& t, char* s, int tid, long long delta) {
    const uint32_t valid = (uint32_t)t.cols * E;
#pragma unroll 1
    for (int i = tid; i < XS * NVR; i += NT) {
      const int r = i / NVR, v = i % NVR;
      const char* p = seam_row(t, r, delta);
      const uint32_t sh = (uint32_t)(uintptr_t)p & (GR - 1);
      if ((uint32_t)(v * V / GR * GR) < sh + valid) at::cp_async16(s, (uint32_t)((ROWS + r) * RAWB + v * V), p - sh + v * V);
      else at::idle_g(0);
    }
  }

  // Seam row r's first byte: row M - XS + r of the previous matrix (t: a top tile, t.left == M).
  __host__ __device__ static __forceinline__ const char* seam_row(const at::Tile& t, int r, long long delta) {
    return t.in - delta + (t.left - XS + r) * t.ldi;
  }

  // mid for the seam rows: realigned, transposed and stored as rows -XS..-1 of the transposed tile.
  __host__ __device__ static __forceinline__ void seam_mid(const at::Tile& t, char* s, int tid, long long delta) {
#pragma unroll 1
    for (int i = tid; i < XS / R * NVC; i += NT) {
      const int rg = i / NVC, vc = i % NVC;
      VecT w[R];
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = rg * R + q;
        const uint32_t sh = (uint32_t)(uintptr_t)seam_row(t, r, delta) & (GR - 1);
        w[q] = at::lds_span<VecT, E>(s, (uint32_t)((ROWS + r) * RAWB + vc * V) + sh);
      }
#pragma unroll
      for (int e = 0; e < K; ++e) {
        uint32_t o[1];
        at::gather<E, R>(w, e, o);
        at::sts<uint32_t>(s, off(rg * R - XS, vc * K + e), o[0]);
      }
    }
  }

  // A block of a strided launch with strips: the tiles of its strip, one after
  // another (at::run_strided). On the GPU each thread runs it; in the host
  // emulator thread 0's call runs every thread of the block, phase by phase
  // (emu_phase 3k + 0, 1, 2: tile k's load, mid and store), and the others' do nothing.
  __host__ __device__ static __forceinline__ void run_strip(const at::StridedArgs& a, const char* in, char* out,
                                                           uint32_t blk, int tid, char* s) {
    const at::Tile strip = at::locate_strided<TR, TC * STRIP, E, ORDER, false, EO>(a, in, out, blk);
    const at::Tile t0 = at::strip_tile<TC>(strip, 0);
    const int n = (strip.cols + TC - 1) / TC;   // the strip's tiles (fewer where the matrix ends inside it)
    const Seam sm = seam_of(a, blk);
    const bool seam = SEAM && strip.top && sm.pred;   // the strip reads the previous matrix's last rows
#if defined(__CUDA_ARCH__)
    if (!edge_vectors(t0)) {   // fewer rows than an output vector: element-wise tiles, one by one
      if (sm.succ) return;     // seams: the tile above wrote these rows' vectors, the next row's top the rest
#pragma unroll 1
      for (int k = 0; k < n; ++k) {
        const at::Tile t = at::strip_tile<TC>(strip, k);
        load<false>(t, s, tid);
        __syncthreads();
        store<false>(t, s, tid);
        __syncthreads();
      }
      return;
    }
    if (t0.cols == TC) strip_load<true>(t0, s, tid, false); else strip_load<false>(t0, s, tid, false);
    if (seam) seam_load(t0, s, tid, sm.delta);
    at::cp_async_wait();
    __syncthreads();
#pragma unroll 1
    for (int k = 0; k < n; ++k) {
      const at::Tile t = at::strip_tile<TC>(strip, k);
      const bool full = t.rows == TR && t.cols == TC;
      tid = at::opaque(tid);   // each tile's thread indices afresh, not every one held across the loop
      if (full) mid<true>(t, s, tid); else mid<false>(t, s, tid);
      if (seam) seam_mid(t, s, tid, sm.delta);
      __syncthreads();
      if (k + 1 < n) {
        const at::Tile u = at::strip_tile<TC>(strip, k + 1);
        if (u.cols == TC) strip_load<true>(u, s, tid, true); else strip_load<false>(u, s, tid, true);
        if (seam) seam_load(u, s, tid, sm.delta);
      }
      if (full) store<true>(t, s, tid, sm); else store<false>(t, s, tid, sm);
      at::cp_async_wait();
      __syncthreads();
    }
#elif defined(AT_EMULATE)
    if (tid != 0) return;
    for (int i = 0; i < SMEM; ++i) s[i] = (char)0xCD;   // stale shared memory
    const int caller_tid = at::emu_tid, caller_phase = at::emu_phase;
    const bool vec = edge_vectors(t0);
    for (int k = 0; k < n && (vec || !sm.succ); ++k) {
      const at::Tile t = at::strip_tile<TC>(strip, k);
      const bool full = t.rows == TR && t.cols == TC;
      for (int ph = 0; ph < 3; ++ph) {
        at::emu_phase = 3 * k + ph;
        for (int u = 0; u < NT; ++u) {
          at::emu_tid = u;
          if (!vec && ph == 0) load<false>(t, s, u);
          else if (!vec && ph == 2) store<false>(t, s, u);
          else if (!vec) continue;
          else if (ph == 0 && t.cols == TC) strip_load<true>(t, s, u, k > 0);
          else if (ph == 0) strip_load<false>(t, s, u, k > 0);
          else if (ph == 1 && full) mid<true>(t, s, u);
          else if (ph == 1) mid<false>(t, s, u);
          else if (full) store<true>(t, s, u, sm);
          else store<false>(t, s, u, sm);
          if (vec && seam && ph == 0) seam_load(t, s, u, sm.delta);
          else if (vec && seam && ph == 1) seam_mid(t, s, u, sm.delta);
        }
      }
    }
    at::emu_tid = caller_tid, at::emu_phase = caller_phase;   // (the emulator's loop variables)
#else
    (void)n, (void)s, (void)tid;
#endif
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void mid(const at::Tile& t, char* s, int tid) {
    if constexpr (FULL) {
#pragma unroll
      for (int k = 0; k < IT2; ++k) {
        int i = tid + k * NT, rg = i / NVC, vc = i % NVC;
        if (ROWS / R * NVC % NT == 0 || i < ROWS / R * NVC) {
          VecT w[R];
#pragma unroll
          for (int q = 0; q < R; ++q) {
            int r = rg * R + q;
            w[q] = at::lds_span<VecT, E>(s, (uint32_t)(r * RAWB + vc * V) + shift_of(t, s, r));
          }
#pragma unroll
          for (int e = 0; e < K; ++e) {
            uint32_t o[1];
            at::gather<E, R>(w, e, o);
            at::sts<uint32_t>(s, off(rg * R, vc * K + e), o[0]);
          }
        }
      }
    } else if constexpr (!OVERLAP) {
      if (edge_vectors(t)) {
#pragma unroll 1
        for (int i = tid; i < ROWS / R * NVC; i += NT) mid_group(t, s, i / NVC, i % NVC);
      }
    }
  }

  // mid's work on row group rg, vector column vc: R raw rows realigned, transposed, stored as K chunks.
  // (The full path keeps its own copy of this body: calling mid_group from there changes
  // nvcc's code for the dense kernels, which the shipped grid timed. NOTES 35.)
  __host__ __device__ static __forceinline__ void mid_group(const at::Tile& t, char* s, int rg, int vc) {
    VecT w[R];
#pragma unroll
    for (int q = 0; q < R; ++q) {
      int r = rg * R + q;
      w[q] = at::lds_span<VecT, E>(s, (uint32_t)(r * RAWB + vc * V) + shift_of(t, s, r));
    }
#pragma unroll
    for (int e = 0; e < K; ++e) {
      uint32_t o[1];
      at::gather<E, R>(w, e, o);
      at::sts<uint32_t>(s, off(rg * R, vc * K + e), o[0]);
    }
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const at::Tile& t, const char* s, int tid, Seam sm = NO_SEAM) {
    if constexpr (FULL) {
#pragma unroll
      for (int k = 0; k < IT3; ++k) {
        uint32_t i = tid + k * NT, c = i / (TR / KO), wv = i % (TR / KO);
        if constexpr (TABLES) store_vector_nd(t, s, c, wv); else store_vector(t, s, c, wv, sm);
      }
    } else if constexpr (!OVERLAP) {
      if (edge_vectors(t)) {
        const uint32_t n = (uint32_t)t.cols * (TR / KO);   // the vectors of the tile's valid output rows
#pragma unroll 1
        for (uint32_t i = tid; i < n; i += NT) {
          if constexpr (TABLES) store_vector_nd(t, s, i / (TR / KO), i % (TR / KO));
          else store_vector(t, s, i / (TR / KO), i % (TR / KO), sm);
        }
      } else if constexpr (TABLES) {
        store_elems_nd(t, s, tid);
      } else {
        at::store_elems<{{ name }}_k>(t, s, tid);
      }
    } else {
      at::store_elems<{{ name }}_k>(t, s, tid);
    }
  }

  // Aligned vector wv of output row c (the tile's column c), and, in the
  // matrix's first tile, the row's first bytes: with a previous row (sm.pred),
  // the whole vector they share; with a next row (sm.succ), the row's last
  // partial vector is that row's to write.
  __host__ __device__ static __forceinline__ void store_vector(const at::Tile& t, const char* s, uint32_t c,
                                                               uint32_t wv, Seam sm = NO_SEAM) {
    char* o = TABLES ? out_col(t, s, c) : t.out + c * t.ldo;
    uint32_t d = (uint32_t)(-(uintptr_t)o) & (V - 1);  // bytes from o to the next aligned address
    char* p = o + d + wv * V;
    VecT v = at::cast_vec<CAST, VecIT, VecT>(at::lds_span<VecIT, E>(s, off(0, c) + in_bytes(d + wv * V)));
    if (rows_left(t) >= ROWS - 1) {
      at::stg<VecT>(p, v);
    } else {
      long long end = (long long)rows_left(t) * EO - d - wv * V;  // bytes of the output row from p on
      if (end >= V) at::stg<VecT>(p, v), at::idle_pieces<VecT>();
      else if (end > 0 && !sm.succ) at::idle_g(1), at::stg_upto(p, v, (uint32_t)end);
      else at::idle_g(1), at::idle_pieces<VecT>();
    }
    if (first(t) && wv == 0 && d && sm.pred) {  // the seam: the previous row's last bytes and this row's first
      at::stg<VecT>(p - V, at::cast_vec<CAST, VecIT, VecT>(at::lds_span<VecIT, E>(s, off(0, c) + in_bytes(d) - VI)));
    } else if (first(t) && sm.pred) {
      at::idle_g(1);
    } else if (first(t) && wv == 0 && d) {  // the matrix's first tile: the row's first bytes
      VecT a = at::cast_vec<CAST, VecIT, VecT>(at::lds_span<VecIT, 4>(s, off(0, c)));
      at::stg_from(p - V, at::shift_bytes(a, a, d), V - d);
    } else if (first(t)) {
      at::idle_pieces<VecT>();
    }
  }

  // ndshift: whether the tile's output rows c and c + 1 (its columns) are one
  // run in memory (row c + 1 starts where row c ends) and the tile holds both
  // whole (its matrix's rows fit one tile): the vector they share is then
  // written whole, by row c + 1 (store_vector_nd). Where a fused matrix has few
  // rows, its output rows are short and follow one another: (2, 0, 3, 1) orders.
  __host__ __device__ static __forceinline__ bool joins(const at::Tile& t, const char* s, uint32_t c) {
    if constexpr (TABLES)
      return t.top && t.left <= TR && c + 1 < (uint32_t)t.cols && out_col(t, s, c + 1) == out_col(t, s, c) + t.left * E;
    else
      return false;
  }

  // store_vector for ndshift (TABLES): its output rows follow one another where
  // joins says so; no seams. (A copy: the shared body changed nvcc's code for the
  // other shift kernels, as in NOTES 35.)
  __host__ __device__ static __forceinline__ void store_vector_nd(const at::Tile& t, const char* s, uint32_t c,
                                                                  uint32_t wv) {
    char* o = out_col(t, s, c);
    uint32_t d = (uint32_t)(-(uintptr_t)o) & (V - 1);  // bytes from o to the next aligned address
    char* p = o + d + wv * V;
    VecT v = at::lds_span<VecT, E>(s, off(0, c) + d + wv * V);
    if (rows_left(t) >= ROWS - 1) {
      at::stg<VecT>(p, v);
    } else {
      long long end = (long long)rows_left(t) * E - d - wv * V;  // bytes of the output row from p on
      if (end >= V) at::stg<VecT>(p, v), at::idle_pieces<VecT>();
      else if (end > 0 && !joins(t, s, c)) at::idle_g(1), at::stg_upto(p, v, (uint32_t)end);
      else at::idle_g(1), at::idle_pieces<VecT>();
    }
    const bool joined = c > 0 && joins(t, s, c - 1);
    if (joined && wv == 0 && d) {  // row c - 1's last bytes and this row's first, whole
      const VecT x = at::lds_span<VecT, E>(s, off(0, c - 1) + (uint32_t)t.left * E - V);
      at::stg<VecT>(p - V, at::shift_bytes(x, at::lds_span<VecT, E>(s, off(0, c)), d));
    } else if (joined) {
      at::idle_g(1);
    } else if (first(t) && wv == 0 && d) {  // the matrix's first tile: the row's first bytes
      VecT a = at::lds_span<VecT, 4>(s, off(0, c));
      at::stg_from(p - V, at::shift_bytes(a, a, d), V - d);
    } else if (first(t)) {
      at::idle_pieces<VecT>();
    }
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
{{ py.args_check }};
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
