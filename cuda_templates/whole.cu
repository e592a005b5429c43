// autotrans template: batches of small matrices, several whole matrices a block
// (whole.py). A block moves G = per_block(M, N) consecutive matrices of the B x M x N
// input: their input is one contiguous run of G * M * N elements and so is their
// output, both moved in V-byte vectors (every matrix starts on a vector: whole.py's
// aligned_for). load copies the run's vectors into shared memory in the input's
// layout, each input row at a pitch of N * E + 4 * PAD bytes (PAD words after it,
// which spread the store phase's lanes over the banks); store builds each output
// vector element by element from there (an output vector may span output rows and
// matrices: its elements are walked in output order, (matrix, column, row)). A
// thread moves up to IT vectors of each run, consecutive threads consecutive
// vectors; a block's last matrices may be fewer than G (Tile::left). Index math is
// 32-bit within a block (a run is at most SMEM bytes): divisions by the run's
// row pitch, N * M and M are multiplies-high by reciprocals a thread works out once.
// (A Tile field for them, set by locate, made ptxas spill vec tiles for sm_80.)
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int V = {{ c.vec_bytes }}, PAD = {{ c.pad }};
  static constexpr int ORDER = at::ORDER_ROW;
  static constexpr bool OVERLAP = false;  // see at::locate
  static constexpr int SMEM = TR * TC * E;               // the capacity: a run's most bytes
  static constexpr int W = E < 4 ? E : 4, K = V / E;     // shared memory moves W-byte words; K elements a vector
  static constexpr int NW = V / W, EW = E / W;           // words of a vector, of an element
  static constexpr int IT = SMEM / V / NT;               // vectors a thread moves (at most)
  static_assert(V % E == 0 && SMEM % (V * NT) == 0 && IT >= 1, "whole.py's geometry");
  typedef at::Bytes<W>::T WordT;
  typedef at::Bytes<V>::T VecT;

  // Matrices a block holds (0: an M x N matrix does not fit), and the blocks of a launch.
  __host__ __device__ static constexpr long long per_block(long long M, long long N) {
    return M * E > SMEM || N * E > SMEM ? 0 : SMEM / (M * (N * E + 4 * PAD));
  }
  __host__ __device__ static constexpr long long grid(long long B, long long M, long long N) {
    return per_block(M, N) ? (B + per_block(M, N) - 1) / per_block(M, N) : 0;
  }

  // x / d for x * d < 2^32 (x, d < 2^16 here): a multiply-high by mg = ceil(2^32 / d).
  __host__ __device__ static __forceinline__ uint32_t magic(uint32_t d) { return d > 1 ? 0xffffffffu / d + 1u : 0u; }
  struct Div {
    uint32_t d, mg;
    __host__ __device__ Div(uint32_t d_, uint32_t mg_) : d(d_), mg(mg_) {}
    __host__ __device__ uint32_t operator()(uint32_t x) const {
#ifdef __CUDA_ARCH__
      return d > 1 ? __umulhi(x, mg) : x;
#else
      return d > 1 ? (uint32_t)(((uint64_t)x * mg) >> 32) : x;
#endif
    }
  };

  // Block blk's run as a Tile: in / out at its first byte, ldi / ldo the input /
  // output row pitch (N * E, M * E), left the matrices it holds (G, or the rest);
  // rows and cols are the template's (every block takes the one, guarded, path).
  __host__ __device__ static __forceinline__ at::Tile locate(const at::Args& a, uint32_t blk) {
    const uint32_t m = (uint32_t)a.M, n = (uint32_t)a.N;     // a fitting matrix: m, n <= SMEM
    const long long g = (uint32_t)SMEM / (m * (n * E + 4u * PAD)), b0 = (long long)blk * g;
    at::Tile t;
    t.in = a.in + b0 * (a.M * a.N * E);
    t.out = a.out + b0 * (a.M * a.N * E);
    t.ldi = a.N * E;
    t.ldo = a.M * E;
    t.sci = E;
    t.left = a.B - b0 < g ? a.B - b0 : g;
    t.rows = TR;
    t.cols = TC;
    t.top = true;
    return t;
  }

  // Bytes of the block's run (a multiple of V).
  __host__ __device__ static __forceinline__ uint32_t run_bytes(const at::Tile& t) {
    return (uint32_t)t.left * (uint32_t)(t.ldi / E) * (uint32_t)t.ldo;
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char* s, int tid) {
    const uint32_t nv = run_bytes(t) / V, rowb = (uint32_t)t.ldi, pitch = rowb + 4u * PAD;
    const Div byrow(rowb, magic(rowb));
    VecT w[IT];
#pragma unroll
    for (int k = 0; k < IT; ++k) {  // every load in flight before the first store
      uint32_t i = tid + k * NT;
      if (i < nv) w[k] = at::ldg<VecT>(t.in + (unsigned long long)i * V); else at::idle_g(0);
    }
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      uint32_t i = tid + k * NT;
      if (i >= nv) continue;
      if constexpr (PAD == 0) {
        at::sts<VecT>(s, i * V, w[k]);
      } else {  // word by word: a vector may hold the end of one input row and the start of the next
        WordT x[NW];
        memcpy(x, &w[k], V);
        uint32_t r = byrow(i * V), cb = i * V - r * rowb;
#pragma unroll
        for (int j = 0; j < NW; ++j) {
          at::sts<WordT>(s, r * pitch + cb, x[j]);
          cb += W;
          if (cb == rowb) cb = 0, ++r;
        }
      }
    }
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const at::Tile& t, const char* s, int tid) {
    const uint32_t m_ = (uint32_t)(t.ldo / E), n_ = (uint32_t)(t.ldi / E), nv = run_bytes(t) / V;
    const uint32_t pitch = n_ * E + 4u * PAD;
    const Div bymn(m_ * n_, magic(m_ * n_)), bym(m_, magic(m_));
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      uint32_t i = tid + k * NT;
      if (i >= nv) {
        at::idle_g(1);
        continue;
      }
      const uint32_t o = i * K, g = bymn(o), rem = o - g * (m_ * n_);
      uint32_t n = bym(rem), m = rem - n * m_;
      uint32_t row = (g * m_ + m) * pitch, col = n * E;   // input element (g, m, n) in shared memory
      WordT x[NW];
#pragma unroll
      for (int q = 0; q < K; ++q) {  // output elements in order: m fastest, then n, then g
#pragma unroll
        for (int j = 0; j < EW; ++j) x[q * EW + j] = at::lds<WordT>(s, row + col + j * W);
        if (++m == m_) {
          m = 0;
          row -= (m_ - 1) * pitch;
          col += E;
          if (++n == n_) n = 0, col = 0, row += m_ * pitch;
        } else {
          row += pitch;
        }
      }
      VecT v;
      memcpy(&v, x, V);
      at::stg<VecT>(t.out + (unsigned long long)i * V, v);
    }
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
AT_AGREE_ARGS({{ py.args_size }}, {{ py.args_offsets | join(", ") }});
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
