// autotrans template: naive and remapped transposes, one thread per element.
// naive: consecutive threads walk input columns (coalesced reads, strided writes).
// remapped: consecutive threads walk output columns (strided reads, coalesced writes).
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr bool OVERLAP = false;  // see at::locate
  static constexpr bool REMAP = {{ 'true' if c.variant == 'remapped' else 'false' }};
  static constexpr int SMEM = 0;
  typedef at::Bytes<E>::T ElemT;

  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char*, int tid) {
    int r = REMAP ? tid % TR : tid / TC, c = REMAP ? tid / TR : tid % TC;
    if (FULL || (r < t.rows && c < t.cols))
      at::stg<ElemT>(t.out + c * t.ldo + (long long)r * E, at::ldg<ElemT>(t.in + r * t.ldi + (long long)c * E));
    else
      at::idle_g(0), at::idle_g(1);
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const at::Tile&, const char*, int) {}
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
AT_AGREE_ARGS({{ py.args_size }}, {{ py.args_offsets | join(", ") }});
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
