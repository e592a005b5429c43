// autotrans template: vectorised shared-memory tile.
// Global loads and stores move V bytes per thread access. Shared memory holds the
// tile transposed: smem row c (an input column, i.e. an output row) holds TR
// elements plus PAD elements of padding. Each thread step of the load phase reads
// R input rows (R vectors of K = V/E elements), transposes that R x K block in
// registers (__byte_perm for 1- and 2-byte elements) and stores K chunks of R
// elements. The store phase reads whole V-byte chunks of smem rows and writes
// them to the output. XOR swizzle permutes the V-byte chunks of smem row c by
// (c / K), which spreads the load phase's chunk stores over the banks. Both
// store paths apply the config's epilogue (at::epilogue): elements, and so
// vectors, are whole epilogue groups (vec.py); or its cast (at::cast_vec):
// shared memory holds input elements, K = V / max(E, EO) a vector, loads move
// VI = K * E bytes and stores VO = K * EO (without a cast both are V). Edge tiles
// whose valid rows and columns are whole vectors store those vectors (store_edge)
// and, below the 16-vector register budget (EDGE_LOADS), load them (load_edge), in
// rolled, guarded loops (few registers); other edge tiles go element-wise.
// Jinja slots: name (the kernel's C name), c (its KernelConfig) and py (Python's view
// of it: templates.python_view, checked at the end). No slot adds or removes a line,
// so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int CAST = at::CAST_{{ c.cast | replace('>', '_') | upper }}, EO = {{ c.out_elem_bytes }};
  static constexpr int E = {{ c.elem_bytes }}, V = {{ c.vec_bytes }}, R = {{ c.micro_rows }}, K = V / (E > EO ? E : EO);
  static constexpr int VI = K * E, VO = K * EO;  // bytes a load and a store move (V, V without a cast)
  static_assert(at::cast_in<CAST, E>() == E && at::cast_out<CAST, E>() == EO && K == {{ c.vec_elems }},
                "KernelConfig.elem_bytes / out_elem_bytes / vec_elems (Python) disagree with at::Cast and vec.cu");
  static constexpr int TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr int PAD = {{ c.pad }};
  static constexpr bool XOR = {{ 'true' if c.swizzle == 'xor' else 'false' }};
  static constexpr bool OVERLAP = false;  // see at::locate (it would cost 8 registers)
  static constexpr bool STRIDED = {{ 'true' if c.layout == 'strided' else 'false' }};  // takes at::StridedArgs (sci == E)
  static constexpr int EPI = at::EPI_{{ c.epilogue | upper }};  // KernelConfig.epilogue (mem.cuh), strided only
  static_assert(at::epi_group(EPI) == {{ c.epilogue_group }},
                "KernelConfig.epilogue_group (Python) disagrees with at::epi_group (C++)");
  static_assert(E % at::epi_group(EPI) == 0, "vec.py: elements must be whole epilogue groups");
  static constexpr int ROWB = (TR + PAD) * E, NCH = TR * E / VI, SMEM = TC * ROWB;
  static constexpr int CW = R * E / 4;  // 32-bit words per stored chunk
  static constexpr int IT1 = (TR / R) * (TC / K) / NT, IT2 = TC * (TR / K) / NT;
  typedef at::Bytes<E>::T ElemT;
  typedef at::Bytes<VI>::T VecT;
  typedef at::Bytes<VO>::T VecOT;
  typedef at::Bytes<R * E>::T ChunkT;

  // Byte offset in shared memory of tile element (input row r, input column c).
  __host__ __device__ static __forceinline__ uint32_t off(int r, int c) {
    int byte = r * E, ch = byte / VI;
    if (XOR) ch ^= (c / K) & (NCH - 1);
    return (uint32_t)(c * ROWB + ch * VI + byte % VI);
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char* s, int tid) {
    if constexpr (FULL) {
      VecT w[IT1][R];
      // Where NT is a multiple of the vectors per row, step k's rows are step 0's
      // moved k * NT / VPR * R rows down: one per-thread address plus uniform
      // multiples of the 64-bit pitch (fewer registers than one product per row).
      constexpr int VPR = TC / K;
      const char* in0 = t.in + (unsigned long long)(uint32_t)(tid / VPR * R) * t.ldi + tid % VPR * VI;
#pragma unroll
      for (int k = 0; k < IT1; ++k) {  // every load in flight before the first use
        int i = tid + k * NT, rg = i / VPR, vc = i % VPR;
#pragma unroll
        for (int q = 0; q < R; ++q)
          w[k][q] = at::ldg<VecT>(NT % VPR == 0 ? in0 + (unsigned long long)(k * (NT / VPR) * R + q) * t.ldi
                                                : t.in + (unsigned long long)(uint32_t)(rg * R + q) * t.ldi + vc * VI);
      }
#pragma unroll
      for (int k = 0; k < IT1; ++k) {
        int i = tid + k * NT, rg = i / (TC / K), vc = i % (TC / K);
#pragma unroll
        for (int e = 0; e < K; ++e) {
          uint32_t o[CW];
          at::gather<E, R>(w[k], e, o);
          at::sts<ChunkT>(s, off(rg * R, vc * K + e), at::pack<ChunkT>(o));
        }
      }
    } else if (EDGE_LOADS && whole_vectors(t)) {
      load_edge(t, s, tid);
    } else {
      at::load_elems<{{ name }}_k>(t, s, tid);
    }
  }

  // Whether edge tiles load vectors (load_edge): not for configs at vec.py
  // keep()'s budget of 16 vectors a thread, where load_edge's registers made
  // ptxas spill for sm_80 (vec:e2:128x128:t256:v16:r8 row and band walks).
  static constexpr bool EDGE_LOADS = IT1 * R + IT2 < 16;

  // Whether an edge tile's valid rows and columns are whole vectors (multiples
  // of K: always so for dense configs, whose rows are vector-aligned).
  __host__ __device__ static __forceinline__ bool whole_vectors(const at::Tile& t) {
    return t.rows % K == 0 && t.cols % K == 0;
  }

  // An edge tile of whole vectors: each step reads one vector of an input row
  // and stores its K elements to shared memory one by one (gathering R rows, as
  // load does, would raise the registers of the whole kernel).
  __host__ __device__ static __forceinline__ void load_edge(const at::Tile& t, char* s, int tid) {
    constexpr int VPR = TC / K;
#pragma unroll 1
    for (int i = tid; i < TR * VPR; i += NT) {
      int r = i / VPR, vc = i % VPR;
      if (r >= t.rows || vc * K >= t.cols) {
        at::idle_g(0);
        continue;
      }
      union { VecT v; ElemT e[K]; } w;
      w.v = at::ldg<VecT>(t.in + (unsigned long long)(uint32_t)r * t.ldi + vc * VI);
#pragma unroll
      for (int e = 0; e < K; ++e) at::sts<ElemT>(s, off(r, vc * K + e), w.e[e]);
    }
  }

  // An edge tile of whole vectors: store's steps, one at a time, where they lie inside.
  __host__ __device__ static __forceinline__ void store_edge(const at::Tile& t, const char* s, int tid) {
    constexpr int VPC = TR / K;
#pragma unroll 1
    for (int i = tid; i < TC * VPC; i += NT) {
      int c = i / VPC, vr = i % VPC;
      if (c >= t.cols || vr * K >= t.rows) {
        at::idle_g(1);
        continue;
      }
      at::stg<VecOT>(t.out + (unsigned long long)(uint32_t)c * t.ldo + vr * VO,
                     at::epilogue<EPI>(at::cast_vec<CAST, VecT, VecOT>(at::lds<VecT>(s, off(vr * K, c)))));
    }
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void store(const at::Tile& t, const char* s, int tid) {
    if constexpr (FULL) {
      VecT v[IT2];
#pragma unroll
      for (int k = 0; k < IT2; ++k) {
        int i = tid + k * NT, c = i / (TR / K), vr = i % (TR / K);
        v[k] = at::lds<VecT>(s, off(vr * K, c));
      }
      constexpr int VPC = TR / K;  // vectors per output row; as in load
      char* out0 = t.out + (unsigned long long)(uint32_t)(tid / VPC) * t.ldo + tid % VPC * VO;
#pragma unroll
      for (int k = 0; k < IT2; ++k) {
        int i = tid + k * NT, c = i / VPC, vr = i % VPC;
        at::stg<VecOT>(NT % VPC == 0 ? out0 + (unsigned long long)(k * (NT / VPC)) * t.ldo
                                     : t.out + (unsigned long long)(uint32_t)c * t.ldo + vr * VO,
                       at::epilogue<EPI>(at::cast_vec<CAST, VecT, VecOT>(v[k])));
      }
    } else if (whole_vectors(t)) {
      store_edge(t, s, tid);
    } else {
      at::store_elems<{{ name }}_k>(t, s, tid);
    }
  }
};

// Python's view of this kernel (templates.python_view), checked at compile time (kernel.cuh).
AT_AGREE({{ name }}_k, {{ py.smem }}, {{ py.threads }}, {{ py.tile_rows }}, {{ py.tile_cols }});
{% for g in py.grid %}AT_AGREE_GRID({{ name }}_k, {{ g.b }}, {{ g.m }}, {{ g.n }}, {{ g.blocks }});{{ " " if not loop.last }}{% endfor %}
{{ py.args_check }};
static_assert({{ name }}_k::IT1 == {{ c.family.steps(c).load }} && {{ name }}_k::IT2 == {{ c.family.steps(c).store }},
              "vec.py's steps() (the register budget keep() assumes) disagrees with vec.cu's IT1/IT2");
{{ py.entry }}({{ name }}, {{ c.threads }}{{ py.fixed_args }})
