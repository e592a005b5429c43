// autotrans template: shared-memory tile with scalar accesses (the classic
// "shared tile", "padded tile" and "XOR-swizzled tile"). The tile is stored in
// the input's orientation: smem row r holds input row r, with PAD elements of
// padding per row; XOR swizzle stores column c of row r at column c ^ (r % TC).
// Input columns are t.sci bytes apart (E, but any multiple of E when strided).
// The store phase applies the config's epilogue (at::epilogue) to each element:
// elements are whole epilogue groups (tile.py); or its cast (at::cast_vec, one
// element): shared memory holds input elements, stores write EO-byte ones.
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr bool OVERLAP = false;  // see at::locate
  static constexpr bool STRIDED = {{ 'true' if c.layout == 'strided' else 'false' }};  // takes at::StridedArgs
  static constexpr int EPI = at::EPI_{{ c.epilogue | upper }};  // KernelConfig.epilogue (mem.cuh), strided only
  static_assert(at::epi_group(EPI) == {{ c.epilogue_group }},
                "KernelConfig.epilogue_group (Python) disagrees with at::epi_group (C++)");
  static_assert(E % at::epi_group(EPI) == 0, "tile.py: elements must be whole epilogue groups");
  static constexpr int CAST = at::CAST_{{ c.cast | replace('>', '_') | upper }}, EO = {{ c.out_elem_bytes }};
  static_assert(at::cast_in<CAST, E>() == E && at::cast_out<CAST, E>() == EO,
                "KernelConfig.elem_bytes / out_elem_bytes (Python) disagree with at::Cast (C++)");
  static constexpr int PAD = {{ c.pad }};
  static constexpr bool XOR = {{ 'true' if c.swizzle == 'xor' else 'false' }};
  static constexpr int SMEM = TR * (TC + PAD) * E;
  typedef at::Bytes<E>::T ElemT;
  typedef at::Bytes<EO>::T OutT;

  // Byte offset in shared memory of tile element (input row r, input column c).
  __host__ __device__ static __forceinline__ uint32_t off(int r, int c) {
    return (uint32_t)((r * (TC + PAD) + (XOR ? (c ^ (r % TC)) : c)) * E);
  }

  // Threads walk input rows: consecutive threads read consecutive columns.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char* s, int tid) {
#pragma unroll
    for (int k = 0; k < TR * TC / NT; ++k) {
      int i = tid + k * NT, r = i / TC, c = i % TC;
      if (FULL || (r < t.rows && c < t.cols))
        at::sts<ElemT>(s, off(r, c), at::ldg<ElemT>(t.in + (unsigned long long)(uint32_t)r * t.ldi + c * t.sci));
      else
        at::idle_g(0);
    }
  }

  // Threads walk output rows: consecutive threads write consecutive columns.
  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const at::Tile& t, const char* s, int tid) {
#pragma unroll
    for (int k = 0; k < TR * TC / NT; ++k) {
      int i = tid + k * NT, c = i / TR, r = i % TR;
      if (FULL || (r < t.rows && c < t.cols))
        at::stg<OutT>(t.out + (unsigned long long)(uint32_t)c * t.ldo + (long long)r * EO,
                      at::epilogue<EPI>(at::cast_vec<CAST, ElemT, OutT>(at::lds<ElemT>(s, off(r, c)))));
      else
        at::idle_g(1);
    }
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
{{ py.args_check }};
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
