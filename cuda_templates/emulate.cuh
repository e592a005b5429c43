// autotrans: the host emulation driver (AT_EMULATE only): every block, every
// thread, phase by phase, in order, through the templates' own code.
#pragma once
#include "kernel.cuh"

#ifdef AT_EMULATE
namespace at {

inline int emu_phase = 0, emu_tid = 0;
inline uint32_t emu_block = 0;

template <class K, bool FULL>
void emu_step(const Tile& t, char* smem) {
  if (emu_phase == 0) K::template load<FULL>(t, smem, emu_tid);
  else if (emu_phase == 2) K::template store<FULL>(t, smem, emu_tid);
  else if constexpr (has_mid<K>::value) K::template mid<FULL>(t, smem, emu_tid);
}

// One block's tile, every thread, phase by phase.
template <class K>
void emu_tile(const Tile& t, char* smem, uint32_t blk) {
  bool full = t.rows == K::TR && t.cols == K::TC;
  for (int i = 0; i < K::SMEM; ++i) smem[i] = (char)0xCD;  // stale shared memory
  emu_block = blk;
  for (emu_phase = 0; emu_phase < 3; ++emu_phase) {
    if (emu_phase == 1 && !has_mid<K>::value) continue;
    for (emu_tid = 0; emu_tid < K::NT; ++emu_tid) {
      if (full) emu_step<K, true>(t, smem); else emu_step<K, false>(t, smem);
    }
  }
}

// One launch of K; false (nothing run) where the grid would need 2^31 blocks or
// more, which no launch takes. Dense kernels only (emulate.cu refuses others).
template <class K>
bool emulate(const Args& a, char* smem) {
  if constexpr (is_strided<K>::value) {
    return false;
  } else {
    if (a.B <= 0 || a.M <= 0 || a.N <= 0) return true;
    const long long n = blocks<K>(a.B, a.M, a.N);
    if (n >= (1ll << 31)) return false;
    for (uint32_t blk = 0; blk < (uint32_t)n; ++blk)
      emu_tile<K>(tile_of<K>(a, blk), smem, blk);
    return true;
  }
}

// The grid of a strided launch of K with arguments a: K::strided_grid(a) where
// the template's launch shape is not a's (flat.cu: kernels.strided.launch_shape), else at::blocks.
template <class K, class = void> struct has_strided_grid { static constexpr bool value = false; };
template <class K>
struct has_strided_grid<K, decltype(void(K::strided_grid(*(const StridedArgs*)nullptr)))> {
  static constexpr bool value = true;
};

// One strided launch of K (at::run_strided's work), as emulate does a dense one.
template <class K>
bool emulate_strided(const StridedArgs& a, char* smem) {
  if constexpr (!is_strided<K>::value) {
    return false;
  } else {
    if (a.B <= 0 || a.M <= 0 || a.N <= 0) return true;
    long long n;
    if constexpr (has_strided_grid<K>::value) n = K::strided_grid(a);
    else n = blocks<K>(a.B, a.M, a.N);
    if (n >= (1ll << 31)) return false;
    for (uint32_t blk = 0; blk < (uint32_t)n; ++blk) {
      if constexpr (has_block<K>::value) {
        emu_block = blk;
        emu_phase = 0;
        for (emu_tid = 0; emu_tid < K::NT; ++emu_tid) K::block(a, a.in, a.out, blk, emu_tid);
      } else if constexpr (tables_of<K>::value) {      // thread 0's call runs the block's tile
        emu_block = blk;
        emu_phase = 0;
        for (emu_tid = 0; emu_tid < K::NT; ++emu_tid) K::run_tables(a, a.in, a.out, blk, emu_tid, smem);
      } else if constexpr (strip_of<K>::value > 1) {   // thread 0's call runs the block's strip
        emu_block = blk;
        emu_phase = 0;
        for (emu_tid = 0; emu_tid < K::NT; ++emu_tid) K::run_strip(a, a.in, a.out, blk, emu_tid, smem);
      } else {
        emu_tile<K>(locate_strided<K::TR, K::TC, K::E, K::ORDER, K::OVERLAP, out_elem<K>::value>(a, blk), smem, blk);
      }
    }
    return true;
  }
}

}  // namespace at
#endif
