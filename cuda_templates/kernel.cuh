// autotrans: the kernel skeleton every template shares: the phases of a block
// (phases, run, run_strided, has_mid, has_block), the element-wise paths of edge
// tiles (with the template's store epilogue, epi_of, and cast, cast_of and
// out_elem), the kernel entries (AT_KERNEL_ENTRY, AT_FIXED_ENTRY, AT_STRIDED_ENTRY, AT_STRIDED_FIXED_ENTRY) and the
// compile-time checks that Python and C++ agree.
#pragma once
#include "mem.cuh"
#include "cast.cuh"
#include "tiles.cuh"

namespace at {

// The element-wise paths of edge tiles, for templates whose shared tile holds
// element (input row r, input column c) at byte K::off(r, c).
template <class K>
__host__ __device__ __forceinline__ void load_elems(const Tile& t, char* s, int tid) {
  for (int i = tid; i < K::TR * K::TC; i += K::NT) {
    int r = i / K::TC, c = i % K::TC;
    if (r < t.rows && c < t.cols)
      sts<typename K::ElemT>(s, K::off(r, c), ldg<typename K::ElemT>(t.in + r * t.ldi + c * t.sci));
    else
      idle_g(0);
  }
}

// A template's store epilogue (KernelConfig.epilogue, mem.cuh's EPI_*): K::EPI
// where the template declares `static constexpr int EPI`, else EPI_NONE.
template <class K, class = void> struct epi_of { static constexpr int value = EPI_NONE; };
template <class K> struct epi_of<K, decltype(void(K::EPI))> { static constexpr int value = K::EPI; };

// A template's cast (KernelConfig.cast, cast.cuh's CAST_*): K::CAST where the
// template declares `static constexpr int CAST`, else CAST_NONE; out_elem: the
// output's element size it gives (K::E's without a cast).
template <class K, class = void> struct cast_of { static constexpr int value = CAST_NONE; };
template <class K> struct cast_of<K, decltype(void(K::CAST))> { static constexpr int value = K::CAST; };
template <class K> struct out_elem { static constexpr int value = cast_out<cast_of<K>::value, K::E>(); };

// store_elems applies K's epilogue to whole elements (tile.py and vec.py make
// elements whole groups of it), or its cast (shared memory holds input elements).
template <class K>
__host__ __device__ __forceinline__ void store_elems(const Tile& t, const char* s, int tid) {
  typedef typename Bytes<out_elem<K>::value>::T OutT;
  for (int i = tid; i < K::TR * K::TC; i += K::NT) {
    int c = i / K::TR, r = i % K::TR;
    if (r < t.rows && c < t.cols)
      stg<OutT>(t.out + c * t.ldo + (long long)r * out_elem<K>::value,
                epilogue<epi_of<K>::value>(cast_vec<cast_of<K>::value, typename K::ElemT, OutT>(
                    lds<typename K::ElemT>(s, K::off(r, c)))));
    else
      idle_g(1);
  }
}

// Whether a template has a middle phase (K::mid, shared -> shared, between
// load and store): templates that declare `static constexpr bool MID = true`.
template <class K, class = void> struct has_mid { static constexpr bool value = false; };
template <class K> struct has_mid<K, decltype(void(K::MID))> { static constexpr bool value = K::MID; };

// The kernel body shared by every template. K is a template's struct: its
// geometry (TR, TC, E, NT) and its phases, load (global -> shared), optionally
// mid, and store (shared -> global). Interior tiles take the unpredicated,
// vectorised path (FULL = true); edge tiles a predicated one (element-wise, or
// vec.cu's guarded vectors where the tile's valid part is whole vectors).
template <class K, bool FULL>
__device__ __forceinline__ void phases(const Tile& t, char* smem) {
  K::template load<FULL>(t, smem, threadIdx.x);
  if (K::SMEM) __syncthreads();
  if constexpr (has_mid<K>::value) {
    K::template mid<FULL>(t, smem, threadIdx.x);
    __syncthreads();
  }
  K::template store<FULL>(t, smem, threadIdx.x);
}

// Whether a template moves a strided launch's blocks itself, without tiles
// or phases: templates that declare `static void block(const StridedArgs&,
// const char* in, char* out, uint32_t blk, int tid)` (rows.cu).
template <class K, class = void> struct has_block { static constexpr bool value = false; };
template <class K> struct has_block<K, decltype(void(&K::block))> { static constexpr bool value = true; };

// Whether a template moves an NdTileProblem through tables of its tile's rows'
// input offsets and columns' output offsets (shift.cu's ndshift variant): templates
// that declare `static constexpr bool TABLES = true` and `static void
// run_tables(const StridedArgs&, const char* in, char* out, uint32_t blk, int tid, char* smem)`.
template <class K, class = void> struct tables_of { static constexpr bool value = false; };
template <class K> struct tables_of<K, decltype(void(K::TABLES))> { static constexpr bool value = K::TABLES; };

// Whether a template's kernel takes a StridedArgs (KernelConfig.layout
// "strided"): templates that declare `static constexpr bool STRIDED = true`.
template <class K, class = void> struct is_strided { static constexpr bool value = false; };
template <class K> struct is_strided<K, decltype(void(K::STRIDED))> { static constexpr bool value = K::STRIDED; };

// Whether a template places its blocks itself: templates that declare
// `static Tile locate(const Args&, uint32_t blk)` (whole.cu), else at::locate's walk.
template <class K, class = void> struct has_locate { static constexpr bool value = false; };
template <class K>
struct has_locate<K, decltype(void(K::locate(*(const Args*)nullptr, 0u)))> {
  static constexpr bool value = true;
};

// The tile block blk of a dense launch moves.
template <class K>
__host__ __device__ __forceinline__ Tile tile_of(const Args& a, uint32_t blk) {
  if constexpr (has_locate<K>::value) return K::locate(a, blk);
  else return locate<K::TR, K::TC, K::E, K::ORDER, K::OVERLAP>(a, blk);
}

template <class K>
__device__ __forceinline__ void run(const Args& a, char* smem) {
  Tile t = tile_of<K>(a, blockIdx.x);
  if (t.rows == K::TR && t.cols == K::TC) phases<K, true>(t, smem);
  else phases<K, false>(t, smem);
}

// run for a strided launch (a strip of tiles a block where the template has
// strips: K::run_strip). in and out are a's pointers, which the entry holds
// in __restrict__ locals: a struct's fields cannot be __restrict__, and nvcc
// (13.0) turns loads into read-only ones (ld.global.nc) only through pointers
// the kernel itself declares __restrict__, not through an inlined function's
// __restrict__ parameters.
template <class K>
__device__ __forceinline__ void run_strided(const StridedArgs& a, const char* in, char* out, char* smem) {
  if constexpr (has_block<K>::value) {
    K::block(a, in, out, blockIdx.x, threadIdx.x);
  } else if constexpr (tables_of<K>::value) {
    K::run_tables(a, in, out, blockIdx.x, threadIdx.x, smem);  // a tile through offset tables (shift.cu)
  } else if constexpr (strip_of<K>::value > 1) {
    K::run_strip(a, in, out, blockIdx.x, threadIdx.x, smem);   // its strip of tiles (shift.cu)
  } else {
    Tile t = locate_strided<K::TR, K::TC, K::E, K::ORDER, K::OVERLAP, out_elem<K>::value>(a, in, out, blockIdx.x);
    if (t.rows == K::TR && t.cols == K::TC) phases<K, true>(t, smem);
    else phases<K, false>(t, smem);
  }
}

}  // namespace at

// A template's kernel: NAME(in, out, B, M, N) runs at::run on struct NAME_k (dynamic
// shared memory of NAME_k::SMEM bytes). Its parameters are at::Args' fields, in
// order and of their types, so the parameter block is laid out as at::Args is
// (AT_AGREE_ARGS checks that against Python's ARGS); the pointers are separate
// __restrict__ parameters, so the input is read through the read-only path.
// Nothing in the host emulator.
#ifndef AT_EMULATE
#define AT_KERNEL_ENTRY(NAME, THREADS)                                                            \
  static_assert(!at::is_strided<NAME##_k>::value, "a strided template's kernel takes AT_STRIDED_ENTRY"); \
  extern "C" __global__ void __launch_bounds__(THREADS)                                           \
  NAME(decltype(at::Args::in) __restrict__ in, decltype(at::Args::out) __restrict__ out,          \
       decltype(at::Args::B) B, decltype(at::Args::M) M, decltype(at::Args::N) N) {               \
    extern __shared__ __align__(16) char smem[];                                                  \
    at::run<NAME##_k>(at::Args{in, out, B, M, N}, smem);                                          \
  }
// A config with a fixed shape (KernelConfig.fixed): the kernel's parameters are
// AT_KERNEL_ENTRY's, but it moves the B_ x M_ x N_ shape it is compiled for,
// whose sizes are constants, so the index math folds. Python launches it on
// that shape only (backend.cuda.Kernel); B, M and N are not read.
#define AT_FIXED_ENTRY(NAME, THREADS, B_, M_, N_)                                                 \
  static_assert(!at::is_strided<NAME##_k>::value, "a fixed shape is for dense kernels");          \
  extern "C" __global__ void __launch_bounds__(THREADS)                                           \
  NAME(decltype(at::Args::in) __restrict__ in, decltype(at::Args::out) __restrict__ out,          \
       decltype(at::Args::B), decltype(at::Args::M), decltype(at::Args::N)) {                     \
    extern __shared__ __align__(16) char smem[];                                                  \
    at::run<NAME##_k>(at::Args{in, out, (B_), (M_), (N_)}, smem);                                 \
  }
// A strided config's kernel (KernelConfig.layout "strided"): NAME(a) runs
// at::run_strided on struct NAME_k; its one parameter is an at::StridedArgs by
// value (AT_AGREE_STRIDED_ARGS checks its layout against Python's STRIDED_ARGS).
#define AT_STRIDED_ENTRY(NAME, THREADS)                                                           \
  static_assert(at::is_strided<NAME##_k>::value, "a dense template's kernel takes AT_KERNEL_ENTRY"); \
  extern "C" __global__ void __launch_bounds__(THREADS) NAME(const at::StridedArgs a) {          \
    extern __shared__ __align__(16) char smem[];                                                  \
    const char* __restrict__ in = a.in;                                                           \
    char* __restrict__ out = a.out;                                                               \
    at::run_strided<NAME##_k>(a, in, out, smem);                                                  \
  }
// A strided config compiled for one launch (KernelConfig.fixed_args): AT_STRIDED_ENTRY's
// parameter, but it moves with the at::StridedArgs values it is compiled for (the
// initializer after the pointers: B, M, N, ldi, ldo, sci, nb, {size}, {src}, {dst}),
// constants, so the index math folds; only the pointers are read. Python launches it
// with those values only (kernels.strided.strided_problems, backend.cuda.Kernel).
#define AT_STRIDED_FIXED_ENTRY(NAME, THREADS, ...)                                                \
  static_assert(at::is_strided<NAME##_k>::value, "a fixed launch is for strided kernels");         \
  extern "C" __global__ void __launch_bounds__(THREADS) NAME(const at::StridedArgs a) {          \
    extern __shared__ __align__(16) char smem[];                                                  \
    const char* __restrict__ in = a.in;                                                           \
    char* __restrict__ out = a.out;                                                               \
    const at::StridedArgs c = {a.in, a.out, __VA_ARGS__};                                         \
    at::run_strided<NAME##_k>(c, in, out, smem);                                                  \
  }
#else
#define AT_KERNEL_ENTRY(NAME, THREADS)
#define AT_FIXED_ENTRY(NAME, THREADS, B_, M_, N_)
#define AT_STRIDED_ENTRY(NAME, THREADS)
#define AT_STRIDED_FIXED_ENTRY(NAME, THREADS, ...)
#endif

// Compile-time agreement with Python: autotrans.kernels.templates.render fills
// these from KernelConfig, so a template formula and its Python twin that
// disagree fail to compile (each message names the Python side).
#define AT_AGREE(K, SMEM_, NT_, TR_, TC_)                                                          \
  static_assert(K::SMEM == (SMEM_), "KernelConfig.smem_bytes (Python) disagrees with the template's SMEM"); \
  static_assert(K::NT == (NT_) && K::TR == (TR_) && K::TC == (TC_),                               \
                "KernelConfig threads/tile_rows/tile_cols (Python) disagree with the template's NT/TR/TC")
#define AT_AGREE_GRID(K, B_, M_, N_, BLOCKS_)                                                      \
  static_assert(at::blocks<K>(B_, M_, N_) == (BLOCKS_),                                           \
                "KernelConfig.blocks (Python) disagrees with at::blocks (C++) on shape " #B_ "x" #M_ "x" #N_)
#define AT_AGREE_ARGS(SIZE_, IN_, OUT_, B_, M_, N_)                                                \
  static_assert(sizeof(at::Args) == (SIZE_) && offsetof(at::Args, in) == (IN_) &&                 \
                offsetof(at::Args, out) == (OUT_) && offsetof(at::Args, B) == (B_) &&              \
                offsetof(at::Args, M) == (M_) && offsetof(at::Args, N) == (N_),                    \
                "templates.ARGS (Python's kernel argument struct) disagrees with at::Args")
#define AT_AGREE_STRIDED_ARGS(MAX_BATCH_, SIZE_, IN_, OUT_, B_, M_, N_, LDI_, LDO_, SCI_, NB_, SZ_, SRC_, DST_) \
  static_assert(at::MAX_BATCH == (MAX_BATCH_),                                                    \
                "autotrans.core.layout.MAX_BATCH (Python) disagrees with at::MAX_BATCH");          \
  static_assert(sizeof(at::StridedArgs) == (SIZE_) && offsetof(at::StridedArgs, in) == (IN_) &&   \
                offsetof(at::StridedArgs, out) == (OUT_) && offsetof(at::StridedArgs, B) == (B_) && \
                offsetof(at::StridedArgs, M) == (M_) && offsetof(at::StridedArgs, N) == (N_) &&     \
                offsetof(at::StridedArgs, ldi) == (LDI_) && offsetof(at::StridedArgs, ldo) == (LDO_) && \
                offsetof(at::StridedArgs, sci) == (SCI_) && offsetof(at::StridedArgs, nb) == (NB_) && \
                offsetof(at::StridedArgs, size) == (SZ_) && offsetof(at::StridedArgs, src) == (SRC_) && \
                offsetof(at::StridedArgs, dst) == (DST_),                                          \
                "templates.STRIDED_ARGS (Python's strided kernel argument struct) disagrees with at::StridedArgs")
