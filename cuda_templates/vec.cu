// autotrans template: vectorised shared-memory tile.
// Global loads and stores move V bytes per thread access. Shared memory holds the
// tile transposed: smem row c (an input column, i.e. an output row) holds TR
// elements plus PAD elements of padding. Each thread step of the load phase reads
// R input rows (R vectors of K = V/E elements), transposes that R x K block in
// registers (__byte_perm for 1- and 2-byte elements) and stores K chunks of R
// elements. The store phase reads whole V-byte chunks of smem rows and writes
// them to the output. XOR swizzle permutes the V-byte chunks of smem row c by
// (c / K), which spreads the load phase's chunk stores over the banks.
// SHIFT (variant "shift") takes rows at any byte alignment. Loads: each tile row
// is read as the aligned vectors covering it; a lane rebuilds its vector from its
// own and the next lane's (a shuffle; a group's last lane loads one more). Stores:
// a tile owns the aligned output vectors that start inside its output rows, so
// it reads K more input rows (XR) and builds each vector from two neighbouring
// smem chunks (its own and the next lane's); only the ends of whole output rows
// are written in parts. Shift tiles at the matrix's end overlap their neighbours
// (at::locate), so only matrices narrower or shorter than a tile take the
// element-wise edge path.
// Jinja slots: name (the kernel's C name) and c (its KernelConfig). No slot adds or
// removes a line, so the #line that precedes a rendered kernel stays exact.
struct {{ name }}_k {
  static constexpr int E = {{ c.elem_bytes }}, V = {{ c.vec_bytes }}, R = {{ c.micro_rows }}, K = V / E;
  static constexpr int TR = {{ c.tile_rows }}, TC = {{ c.tile_cols }}, NT = {{ c.threads }};
  static constexpr int ORDER = at::ORDER_{{ c.order | upper }};
  static constexpr int PAD = {{ c.pad }};
  static constexpr bool XOR = {{ 'true' if c.swizzle == 'xor' else 'false' }};
  static constexpr bool SHIFT = {{ 'true' if c.variant == 'shift' else 'false' }};
  static constexpr bool OVERLAP = SHIFT;  // see at::locate (it costs vec tiles 8 registers)
  static constexpr int XR = SHIFT ? K : 0;  // input rows read beyond the tile
  static constexpr int ROWB = (TR + XR + PAD) * E, NCH = TR * E / V, SMEM = TC * ROWB;
  static constexpr int CW = R * E / 4;  // 32-bit words per stored chunk
  static constexpr int NV1 = (TR / R) * (TC / K), NX1 = (XR / R) * (TC / K);  // load vectors: tile, extra
  static constexpr int IT1 = NV1 / NT, ITX = (NX1 + NT - 1) / NT, IT2 = TC * (TR / K) / NT;
  typedef at::Bytes<E>::T ElemT;
  typedef at::Bytes<V>::T VecT;
  typedef at::Bytes<R * E>::T ChunkT;

  // Byte offset in shared memory of tile element (input row r, input column c).
  __host__ __device__ static __forceinline__ uint32_t off(int r, int c) {
    int byte = r * E, ch = byte / V;
    if (XOR && (!SHIFT || ch < NCH)) ch ^= (c / K) & (NCH - 1);
    return (uint32_t)(c * ROWB + ch * V + byte % V);
  }

  // Column e of R loaded rows, packed into one chunk (R elements, CW words).
  __host__ __device__ static __forceinline__ void gather(const VecT (&w)[R], int e, uint32_t (&o)[CW]) {
    if constexpr (E >= 4) {
#pragma unroll
      for (int q = 0; q < R; ++q)
#pragma unroll
        for (int j = 0; j < E / 4; ++j) o[q * (E / 4) + j] = at::word(w[q], e * (E / 4) + j);
    } else if constexpr (E == 2) {
#pragma unroll
      for (int j = 0; j < CW; ++j)
        o[j] = at::perm(at::word(w[2 * j], e / 2), at::word(w[2 * j + 1], e / 2), (e & 1) ? 0x7632 : 0x5410);
    } else {
      const uint32_t sel = (e & 3) | ((4 + (e & 3)) << 4);
#pragma unroll
      for (int j = 0; j < CW; ++j)
        o[j] = at::perm(at::perm(at::word(w[4 * j], e / 4), at::word(w[4 * j + 1], e / 4), sel),
                        at::perm(at::word(w[4 * j + 2], e / 4), at::word(w[4 * j + 3], e / 4), sel), 0x5410);
    }
  }

  // First byte of tile row r (SHIFT: rows past the matrix's last repeat it; they are never stored).
  __host__ __device__ static __forceinline__ const char* row(const at::Tile& t, int r) {
    if constexpr (SHIFT) r = r < t.left ? r : t.left - 1;
    return t.in + (long long)r * t.ldi;
  }

  // SHIFT: rebuilds lane vc's vectors of R rows from the aligned ones, w (own)
  // and the next lane's, or x for a group's last lane. On the host (the emulator
  // runs one thread at a time) the next vector is read again from memory.
  __host__ __device__ static __forceinline__ void realign(VecT (&w)[R], const VecT (&x)[R], const at::Tile& t,
                                                          int rg, int vc) {
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const char* p = row(t, rg * R + q);
      uint32_t sh = (uint32_t)(uintptr_t)p & (V - 1);
#ifdef __CUDA_ARCH__
      VecT n = at::shfl_next(w[q]);
      n = vc == TC / K - 1 ? x[q] : n;
#else
      VecT n = sh ? at::ldg<VecT>(p - sh + (vc + 1) * V) : w[q];
#endif
      w[q] = at::shift_bytes(w[q], n, sh);
    }
  }

  // Step k of the load phase: NT vectors (R rows by one vector) from vector
  // index i0 on, tile rows from r0 on; steps [0, IT1) read the tile, the ITX
  // steps after them the XR extra rows (SHIFT), only NX1 vectors of them.
  __host__ __device__ static __forceinline__ void step(int k, int tid, int& i, int& rg, int& vc) {
    i = tid + (k < IT1 ? k : k - IT1) * NT;
    rg = (k < IT1 ? 0 : TR / R) + i / (TC / K);
    vc = i % (TC / K);
  }

  template <bool FULL>
  __host__ __device__ static __forceinline__ void load(const at::Tile& t, char* s, int tid) {
    if constexpr (FULL) {
      VecT w[IT1 + ITX][R], x[IT1 + ITX][R];  // x: the aligned vector after a row's last (SHIFT only)
#pragma unroll
      for (int k = 0; k < IT1 + ITX; ++k) {  // every load in flight before the first use
        int i, rg, vc;
        step(k, tid, i, rg, vc);
#pragma unroll
        for (int q = 0; q < R; ++q) {
          const char* p = row(t, rg * R + q);
          if constexpr (SHIFT) {
            uint32_t sh = (uint32_t)(uintptr_t)p & (V - 1);
            p -= sh;
            x[k][q] = sh && vc == TC / K - 1 ? at::ldg<VecT>(p + TC * E) : VecT{};
          }
          w[k][q] = at::ldg<VecT>(p + vc * V);
        }
      }
#pragma unroll
      for (int k = 0; k < IT1 + ITX; ++k) {
        int i, rg, vc;
        step(k, tid, i, rg, vc);
        if constexpr (SHIFT) realign(w[k], x[k], t, rg, vc);  // the whole warp shuffles
        if (k < IT1 || i < NX1) {
#pragma unroll
          for (int e = 0; e < K; ++e) {
            uint32_t o[CW];
            gather(w[k], e, o);
            at::sts<ChunkT>(s, off(rg * R, vc * K + e), at::pack<ChunkT>(o));
          }
        }
      }
    } else {
      for (int i = tid; i < TR * TC; i += NT) {
        int r = i / TC, c = i % TC;
        if (r < t.rows && c < t.cols) at::sts<ElemT>(s, off(r, c), at::ldg<ElemT>(t.in + r * t.ldi + (long long)c * E));
      }
    }
  }

  // SHIFT: the chunk after v (chunk vr of smem row c): the next lane's, or
  // for a group's last lane the extra chunk (the host reads it from smem).
  __host__ __device__ static __forceinline__ VecT next_chunk(const char* s, VecT v, int c, int vr) {
#ifdef __CUDA_ARCH__
    VecT n = at::shfl_next(v);
    if (vr == TR / K - 1) n = at::lds<VecT>(s, off(TR, c));
    return n;
#else
    return at::lds<VecT>(s, off(vr * K + K, c));
#endif
  }

  // SHIFT: output row o (the tile's part starts at o) gets the aligned vector
  // number wv after o, made of chunks a and b of its smem row. The matrix's first
  // tile also writes the part of the vector before, the last ones clip at the row's end.
  __host__ __device__ static __forceinline__ void store_shifted(const at::Tile& t, char* o, VecT a, VecT b, int wv) {
    uint32_t d = (uint32_t)(-(uintptr_t)o) & (V - 1);  // bytes from o to the next aligned address
    char* p = o + d + wv * V;
    VecT v = at::shift_bytes(a, b, d);
    if (t.left >= TR + XR - 1) {
      at::stg<VecT>(p, v);
    } else {
      long long end = (long long)t.left * E - d - wv * V;  // bytes of the output row from p on
      if (end >= V) at::stg<VecT>(p, v);
      else if (end > 0) at::stg_upto(p, v, (uint32_t)end);
    }
    if (t.left == t.ldo / E && wv == 0 && d) at::stg_from(p - V, at::shift_bytes(a, a, d), V - d);
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
#pragma unroll
      for (int k = 0; k < IT2; ++k) {
        int i = tid + k * NT, c = i / (TR / K), vr = i % (TR / K);
        if constexpr (SHIFT) store_shifted(t, t.out + c * t.ldo, v[k], next_chunk(s, v[k], c, vr), vr);
        else at::stg<VecT>(t.out + c * t.ldo + vr * V, v[k]);
      }
    } else {
      for (int i = tid; i < TR * TC; i += NT) {
        int c = i / TR, r = i % TR;
        if (r < t.rows && c < t.cols) at::stg<ElemT>(t.out + c * t.ldo + (long long)r * E, at::lds<ElemT>(s, off(r, c)));
      }
    }
  }
};

#ifndef AT_EMULATE
extern "C" __global__ void __launch_bounds__({{ c.threads }})
{{ name }}(const char* __restrict__ in, char* __restrict__ out, int B, int M, int N) {
  extern __shared__ __align__(16) char smem[];
  at::run<{{ name }}_k>(in, out, B, M, N, smem);
}
#endif
