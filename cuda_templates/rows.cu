// autotrans template: rows gathered from strided places (a RowsProblem of
// autotrans.core.layout). Row i of the M = prod(size) rows of N elements starts
// at in + sum(idx * src) and goes to out + sum(idx * dst), idx being i
// decomposed over the launch's nb dimensions (at::batch_offsets); B = 1 and
// ldi, ldo, sci are unused. A block moves TR rows x TC elements of them (the
// tile walk of at::walk) with V-byte accesses and no shared memory: VT
// threads across a tile row, RP = NT / VT rows at a time, IR such passes, so a
// thread moves IR rows x IV vectors, every load in flight before the first
// store. Rows, their strides and the pointers are V-byte aligned (rows.py's
// strided_problems checks it). Stores apply the config's epilogue at their
// byte offset from the output pointer (at::epilogue_at: a vector smaller than
// the epilogue's group flips a bit only where it ends a group), or its cast
// (at::cast_vec, in registers): K = V / max(E, EO) elements a vector, loads of
// VI = K * E bytes become stores of VO = K * EO (both V without a cast); TC
// and N count elements, the rows' dst strides output bytes. A cast between
// sizes may take V = 32 or 64 (rows.py's WIDE_VECS) where min(VI, VO) <= 16:
// the wider side's vector (at::Bytes<32>, <64>) is then two or four 16-byte
// accesses, so the strides and pointers need only be aligned to the accesses
// (min(16, VI) in, min(16, VO) out, pointers min(16, V)).
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int CAST = at::CAST_{{ c.cast | replace('>', '_') | upper }}, EO = {{ c.out_elem_bytes }};
  static constexpr int E = {{ c.elem_bytes }}, V = {{ c.vec_bytes }}, K = V / (E > EO ? E : EO);
  static constexpr int VI = K * E, VO = K * EO;  // bytes a load and a store move (V, V without a cast)
  static_assert(V <= 16 || (CAST != at::CAST_NONE && (VI < VO ? VI : VO) <= 16),
                "rows.py's problems(): V over 16 (WIDE_VECS) only for a cast whose narrower side is one access");
  static_assert(at::cast_in<CAST, E>() == E && at::cast_out<CAST, E>() == EO && K == {{ c.vec_elems }},
                "KernelConfig.elem_bytes / out_elem_bytes / vec_elems (Python) disagree with at::Cast and rows.cu");
  static constexpr int TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr bool OVERLAP = false, STRIDED = true;
  static constexpr int EPI = at::EPI_{{ c.epilogue | upper }};  // KernelConfig.epilogue (mem.cuh), strided only
  static_assert(at::epi_group(EPI) == {{ c.epilogue_group }},
                "KernelConfig.epilogue_group (Python) disagrees with at::epi_group (C++)");
  static constexpr int SMEM = 0;
  static constexpr int TCV = TC / K;                 // vectors of a tile row
  static constexpr int VT = TCV < 32 ? TCV : 32;     // threads across a tile row
  static constexpr int RP = NT / VT;                 // tile rows a pass of the block moves
  static constexpr int IR = TR / RP, IV = TCV / VT;  // passes (rows a thread moves), vectors a row
  static_assert(TC % K == 0 && NT % VT == 0 && TR % RP == 0 && IR >= 1, "rows.py's geometry");
  typedef at::Bytes<VI>::T VecT;
  typedef at::Bytes<VO>::T VecOT;

  // One thread's share of block blk; I: the row index type (at::batch_offsets).
  template <class I>
  __host__ __device__ static __forceinline__ void move(const at::StridedArgs& a, const char* in, char* out,
                                                       uint32_t blk, int tid) {
    uint32_t b, tr, tc;
    at::walk<TR, TC, ORDER>(a.M, a.N, blk, b, tr, tc);   // b == 0: B == 1
    const long long r0 = (long long)tr * TR + tid / VT, rowb = a.N * E;
    const long long c0 = (long long)tc * (TC * E) + (tid % VT) * VI;  // this thread's first byte of a row
    const long long d0 = EO == E ? c0 : (long long)tc * (TC * EO) + (tid % VT) * VO;   // ... of an output row
    VecT w[IR][IV];
    I x[IR];
    long long oi[IR], oo[IR];
    bool ok[IR];
#pragma unroll
    for (int k = 0; k < IR; ++k) {
      long long r = r0 + (long long)k * RP;
      ok[k] = r < a.M;
      x[k] = ok[k] ? (I)r : 0;
    }
    at::batch_offsets<I, IR>(a, x, oi, oo);
#pragma unroll
    for (int k = 0; k < IR; ++k)   // every load in flight before the first store
#pragma unroll
      for (int j = 0; j < IV; ++j)
        if (ok[k] && c0 + j * (VT * VI) < rowb) w[k][j] = at::ldg<VecT>(in + oi[k] + c0 + j * (VT * VI));
        else at::idle_g(0);
#pragma unroll
    for (int k = 0; k < IR; ++k)
#pragma unroll
      for (int j = 0; j < IV; ++j)
        if (ok[k] && c0 + j * (VT * VI) < rowb)
          at::stg<VecOT>(out + oo[k] + d0 + j * (VT * VO),
                         at::epilogue_at<EPI>(at::cast_vec<CAST, VecT, VecOT>(w[k][j]),
                                              (uint32_t)(oo[k] + d0 + j * (VT * VO))));
        else
          at::idle_g(1);
  }

  // at::has_block: the kernel moves its blocks itself. 32-bit row indices
  // (one 32-bit division a row dimension) where every row's index fits.
  __host__ __device__ static __forceinline__ void block(const at::StridedArgs& a, const char* in, char* out,
                                                        uint32_t blk, int tid) {
    if (a.M <= 0xFFFFFFFFll) move<uint32_t>(a, in, out, blk, tid);
    else move<unsigned long long>(a, in, out, blk, tid);
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
{{ py.args_check }};
static_assert({{ name }}_k::IR == {{ c.family.geometry(c).passes }} && {{ name }}_k::IV == {{ c.family.geometry(c).vecs }},
              "rows.py's geometry() (what problems() bounds) disagrees with rows.cu's IR/IV");
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
