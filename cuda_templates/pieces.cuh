// autotrans: partial global stores of a vector held in registers (stg_piece,
// stg_from, stg_upto), for output rows whose ends are not vector-aligned.
#pragma once
#include "mem.cuh"
#include "shuffle.cuh"

namespace at {

// Stores the SZ bytes at byte offset pos (a multiple of SZ) of v to p + pos.
template <int SZ, typename T>
__host__ __device__ __forceinline__ void stg_piece(char* p, T v, uint32_t pos) {
  uint32_t w = word_at(v, pos / 4);
  if constexpr (SZ == 8) stg<uint2>(p + pos, make_uint2(w, word_at(v, pos / 4 + 1)));
  else stg<typename Bytes<SZ>::T>(p + pos, (typename Bytes<SZ>::T)(w >> (8 * (pos & 3))));
}

// Partial stores of a vector v whose sizeof(T)-aligned home is p: bytes
// [lo, sizeof(T)) (stg_from) or [0, hi) (stg_upto), each in at most
// log2(sizeof(T)) naturally aligned pieces. Bytes outside the range are not written,
// so two blocks may fill the two parts of one vector.
// Each piece size is one store instruction; a lane that skips one idles in it
// (idle_g), so idle_pieces<T> is what a lane that stores none of them does.
template <typename T>
__host__ __device__ __forceinline__ void stg_from(char* p, T v, uint32_t lo) {
  if (lo & 1) stg_piece<1>(p, v, lo), lo += 1; else idle_g(1);
  if (lo & 2) stg_piece<2>(p, v, lo), lo += 2; else idle_g(1);
  if constexpr (sizeof(T) > 4) if (lo & 4) stg_piece<4>(p, v, lo), lo += 4; else idle_g(1);
  if constexpr (sizeof(T) > 8) if (lo & 8) stg_piece<8>(p, v, lo); else idle_g(1);
}

template <typename T>
__host__ __device__ __forceinline__ void stg_upto(char* p, T v, uint32_t hi) {
  uint32_t pos = 0;
  if constexpr (sizeof(T) > 8) if (hi & 8) stg_piece<8>(p, v, pos), pos += 8; else idle_g(1);
  if constexpr (sizeof(T) > 4) if (hi & 4) stg_piece<4>(p, v, pos), pos += 4; else idle_g(1);
  if (hi & 2) stg_piece<2>(p, v, pos), pos += 2; else idle_g(1);
  if (hi & 1) stg_piece<1>(p, v, pos); else idle_g(1);
}

template <typename T>
__host__ __device__ __forceinline__ void idle_pieces() {
  idle_g(1), idle_g(1);
  if constexpr (sizeof(T) > 4) idle_g(1);
  if constexpr (sizeof(T) > 8) idle_g(1);
}

}  // namespace at
