// autotrans: the element conversions of a fused cast (KernelConfig.cast, issue
// 15's permute(x, axes, dtype=)): at::Cast<CAST_X_Y>::conv, integer arithmetic
// (but for f32_f16_rne on the device: the hardware's IEEE conversion),
// __host__ __device__, so the host emulator runs the GPU's own code; and
// cast_vec, which converts every element of a vector held in registers.
//
// Bit for bit as NumPy's astype on x86-64 (core.layout.cast_reference is the
// reference the tests hold these to):
//   f64>f32, f32>f64  C casts (cvtsd2ss / cvtss2sd): round to nearest even;
//                     a NaN is quieted and keeps its sign and the top of its payload
//   f32>f16, f64>f16  numpy's npy_floatbits_to_halfbits / npy_doublebits_to_halfbits:
//                     round to nearest even, float64 directly (never through
//                     float32); a NaN keeps its sign and the payload's top 10
//                     bits, not quieted (0x7C01 where those are all zero)
//   f16>f32, f16>f64  numpy's npy_halfbits_to_floatbits / _to_doublebits: exact;
//                     a NaN keeps its sign and payload, not quieted
//   bfloat16          ml_dtypes (Eigen's scalar code): every cast goes through
//                     float32 (static_cast<To>(static_cast<float>(x))), so
//                     f64>bf16 rounds twice; float32 -> bfloat16 rounds to
//                     nearest even, NaN -> 0x7FC0 | sign; bfloat16 -> float32
//                     shifts (exact, NaN payload kept); float32 -> float16
//                     (bf16>f16) as f32>f16 but NaN -> 0x7E00 | sign (Eigen's
//                     float_to_half_rtne without F16C); float32 -> float64 as f32>f64
//   integers          narrowing keeps the low bytes; widening sign-extends
//                     (CAST_I*) or zero-extends (CAST_U*)
#pragma once
#include <stdint.h>
#include <string.h>
#include "mem.cuh"

namespace at {

// One per entry of kernels.config.CASTS (the template renders at::CAST_<NAME>,
// '>' as '_', upper case; a name missing here fails to compile).
enum {
  CAST_NONE = 0,
  CAST_F64_F32, CAST_F64_F16, CAST_F64_BF16, CAST_F32_F64, CAST_F32_F16, CAST_F32_BF16,
  CAST_F16_F64, CAST_F16_F32, CAST_F16_BF16, CAST_BF16_F64, CAST_BF16_F32, CAST_BF16_F16,
  CAST_I64_I32, CAST_I64_I16, CAST_I64_I8, CAST_I32_I16, CAST_I32_I8, CAST_I16_I8,
  CAST_I8_I16, CAST_I8_I32, CAST_I8_I64, CAST_I16_I32, CAST_I16_I64, CAST_I32_I64,
  CAST_U8_U16, CAST_U8_U32, CAST_U8_U64, CAST_U16_U32, CAST_U16_U64, CAST_U32_U64
};

typedef unsigned long long u64;

__host__ __device__ __forceinline__ int clz32(uint32_t x) {  // x != 0
#ifdef __CUDA_ARCH__
  return __clz((int)x);
#else
  return __builtin_clz(x);
#endif
}

// An IEEE binary format of SE exponent and SM fraction bits narrowed to one
// of TE <= SE and TM < SM, rounded to nearest even: any input but a NaN (each
// cast's own rule): signed zeros and infinities, subnormals on either side
// (a subnormal input stays subnormal or becomes zero), overflow to infinity.
template <int SE, int SM, int TE, int TM>
__host__ __device__ __forceinline__ u64 narrow_float(u64 x) {
  static_assert(TE <= SE && TM < SM, "narrow_float narrows");
  constexpr int SB = (1 << (SE - 1)) - 1, TB = (1 << (TE - 1)) - 1, SMAX = (1 << SE) - 1, TMAX = (1 << TE) - 1;
  constexpr u64 TINF = (u64)TMAX << TM;
  const u64 sign = (x >> (SE + SM)) & 1;
  const int exp = (int)((x >> SM) & SMAX);
  u64 man = x & ((1ull << SM) - 1), out;
  if (exp == SMAX) {
    out = TINF;
  } else {
    if (exp != 0) man |= 1ull << SM;
    int te = (exp != 0 ? exp : 1) - SB + TB;   // the target's biased exponent of man's bit SM
    if (te >= TMAX) {
      out = TINF;
    } else {
      const int shift = SM - TM + (te < 1 ? 1 - te : 0);
      if (te < 1) te = 1;
      u64 m = 0;                      // shift > SM + 1: below half the least subnormal
      if (shift <= SM + 1) {
        const u64 rem = man & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        m = man >> shift;
        m += (rem > half || (rem == half && (m & 1))) ? 1 : 0;
      }
      out = ((u64)(te - 1) << TM) + m;   // a carry out of m moves the exponent up, to TINF at most
    }
  }
  return out | (sign << (TE + TM));
}

// float32 -> float16 rounded to nearest even, any input but a NaN. On the
// device the hardware's cvt.rn.f16.f32 (IEEE: the same bits; one instruction
// where the integer paths below diverge within a warp on mixed magnitudes);
// on the host, 32-bit integer arithmetic. (GPU tests hold both to NumPy.)
__host__ __device__ __forceinline__ uint16_t f32_f16_rne(uint32_t x) {
#ifdef __CUDA_ARCH__
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(__uint_as_float(x)));
  return h;
#else
  const uint32_t s = (x >> 16) & 0x8000u, a = x & 0x7FFFFFFFu;
  uint32_t r;
  if (a >= 0x47800000u) {
    r = 0x7C00u;                                                  // 2^16 and above, infinity
  } else if (a >= 0x38800000u) {
    r = (a - 0x38000000u + 0xFFFu + ((a >> 13) & 1u)) >> 13;      // normal; may round up to infinity
  } else if (a < 0x33000000u) {
    r = 0;                                                        // below 2^-25
  } else {                                                        // subnormal: 14 to 24 bits dropped
    const uint32_t sh = 126u - (a >> 23), man = 0x800000u | (a & 0x7FFFFFu);
    const uint32_t rem = man & ((1u << sh) - 1), half = 1u << (sh - 1);
    r = man >> sh;
    r += (rem > half || (rem == half && (r & 1u))) ? 1u : 0u;
  }
  return (uint16_t)(r | s);
#endif
}

// float16 -> float32 as numpy: exact; a NaN keeps its payload.
__host__ __device__ __forceinline__ uint32_t f16_f32(uint16_t h) {
  const uint32_t s = (uint32_t)(h & 0x8000u) << 16, a = h & 0x7FFFu;
  if (a >= 0x7C00u) return s | 0x7F800000u | ((a & 0x3FFu) << 13);
  if (a >= 0x0400u) return s | ((a + 0x1C000u) << 13);
  if (a == 0) return s;
  const int lz = clz32(a) - 21;                                   // to put the leading bit at bit 10
  return s | ((uint32_t)(113 - lz) << 23) | (((a << lz) & 0x3FFu) << 13);
}

__host__ __device__ __forceinline__ uint16_t f32_bf16(uint32_t x) {   // Eigen's float_to_bfloat16_rtne
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(((x >> 16) & 0x8000u) | 0x7FC0u);
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

__host__ __device__ __forceinline__ uint32_t f64_f32(u64 x) {         // cvtsd2ss
  if ((x & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull)
    return (uint32_t)((x >> 32) & 0x80000000u) | 0x7FC00000u | (uint32_t)((x >> 29) & 0x7FFFFFu);
  return (uint32_t)narrow_float<11, 52, 8, 23>(x);
}

__host__ __device__ __forceinline__ u64 f32_f64(uint32_t x) {         // cvtss2sd: exact (32-bit arithmetic)
  const u64 s = (u64)(x & 0x80000000u) << 32;
  const uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return s | 0x7FF8000000000000ull | ((u64)(a & 0x7FFFFFu) << 29);
  if (a == 0x7F800000u) return s | 0x7FF0000000000000ull;
  if (a >= 0x00800000u) return s | (((u64)a << 29) + ((u64)(1023 - 127) << 52));
  if (a == 0) return s;
  const int lz = clz32(a) - 8;                                    // to put the leading bit at bit 23
  return s | ((u64)(897 - lz) << 52) | ((u64)((a << lz) & 0x7FFFFFu) << 29);
}

// Scalar words of B bytes (what conv takes and gives).
template <int B> struct Word;
template <> struct Word<1> { typedef uint8_t T; };
template <> struct Word<2> { typedef uint16_t T; };
template <> struct Word<4> { typedef uint32_t T; };
template <> struct Word<8> { typedef u64 T; };

// Cast<C>: IN and OUT (element bytes; 0 for CAST_NONE) and conv, one element.
template <int C> struct Cast;
template <> struct Cast<CAST_NONE> { static constexpr int IN = 0, OUT = 0; };

// (the body is variadic: its commas are no macro argument separators)
#define AT_CAST(C, I, O, TI, TO, ...)                                           \
  template <> struct Cast<C> {                                                  \
    static constexpr int IN = I, OUT = O;                                       \
    __host__ __device__ static __forceinline__ TO conv(TI x) __VA_ARGS__       \
  };

AT_CAST(CAST_F64_F32, 8, 4, u64, uint32_t, { return f64_f32(x); })
AT_CAST(CAST_F64_F16, 8, 2, u64, uint16_t, {
  if ((x & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) {
    const uint32_t p = (uint32_t)(x >> 42) & 0x3FFu;
    return (uint16_t)(((x >> 48) & 0x8000u) | 0x7C00u | (p ? p : 1u));
  }
  return (uint16_t)narrow_float<11, 52, 5, 10>(x);
})
AT_CAST(CAST_F64_BF16, 8, 2, u64, uint16_t, { return f32_bf16(f64_f32(x)); })
AT_CAST(CAST_F32_F64, 4, 8, uint32_t, u64, { return f32_f64(x); })
AT_CAST(CAST_F32_F16, 4, 2, uint32_t, uint16_t, {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    const uint32_t p = (x >> 13) & 0x3FFu;
    return (uint16_t)(((x >> 16) & 0x8000u) | 0x7C00u | (p ? p : 1u));
  }
  return f32_f16_rne(x);
})
AT_CAST(CAST_F32_BF16, 4, 2, uint32_t, uint16_t, { return f32_bf16(x); })
AT_CAST(CAST_F16_F64, 2, 8, uint16_t, u64, {   // both steps exact; a NaN keeps its payload
  if ((x & 0x7C00u) == 0x7C00u)
    return ((u64)(x & 0x8000u) << 48) | 0x7FF0000000000000ull | ((u64)(x & 0x3FFu) << 42);
  return f32_f64(f16_f32(x));
})
AT_CAST(CAST_F16_F32, 2, 4, uint16_t, uint32_t, { return f16_f32(x); })
AT_CAST(CAST_F16_BF16, 2, 2, uint16_t, uint16_t, { return f32_bf16(f16_f32(x)); })
AT_CAST(CAST_BF16_F64, 2, 8, uint16_t, u64, { return f32_f64((uint32_t)x << 16); })
AT_CAST(CAST_BF16_F32, 2, 4, uint16_t, uint32_t, { return (uint32_t)x << 16; })
AT_CAST(CAST_BF16_F16, 2, 2, uint16_t, uint16_t, {
  if ((x & 0x7FFFu) > 0x7F80u) return (uint16_t)((x & 0x8000u) | 0x7E00u);
  return f32_f16_rne((uint32_t)x << 16);
})
AT_CAST(CAST_I64_I32, 8, 4, u64, uint32_t, { return (uint32_t)x; })
AT_CAST(CAST_I64_I16, 8, 2, u64, uint16_t, { return (uint16_t)x; })
AT_CAST(CAST_I64_I8, 8, 1, u64, uint8_t, { return (uint8_t)x; })
AT_CAST(CAST_I32_I16, 4, 2, uint32_t, uint16_t, { return (uint16_t)x; })
AT_CAST(CAST_I32_I8, 4, 1, uint32_t, uint8_t, { return (uint8_t)x; })
AT_CAST(CAST_I16_I8, 2, 1, uint16_t, uint8_t, { return (uint8_t)x; })
AT_CAST(CAST_I8_I16, 1, 2, uint8_t, uint16_t, { return (uint16_t)(int16_t)(int8_t)x; })
AT_CAST(CAST_I8_I32, 1, 4, uint8_t, uint32_t, { return (uint32_t)(int32_t)(int8_t)x; })
AT_CAST(CAST_I8_I64, 1, 8, uint8_t, u64, { return (u64)(long long)(int8_t)x; })
AT_CAST(CAST_I16_I32, 2, 4, uint16_t, uint32_t, { return (uint32_t)(int32_t)(int16_t)x; })
AT_CAST(CAST_I16_I64, 2, 8, uint16_t, u64, { return (u64)(long long)(int16_t)x; })
AT_CAST(CAST_I32_I64, 4, 8, uint32_t, u64, { return (u64)(long long)(int32_t)x; })
AT_CAST(CAST_U8_U16, 1, 2, uint8_t, uint16_t, { return x; })
AT_CAST(CAST_U8_U32, 1, 4, uint8_t, uint32_t, { return x; })
AT_CAST(CAST_U8_U64, 1, 8, uint8_t, u64, { return x; })
AT_CAST(CAST_U16_U32, 2, 4, uint16_t, uint32_t, { return x; })
AT_CAST(CAST_U16_U64, 2, 8, uint16_t, u64, { return x; })
AT_CAST(CAST_U32_U64, 4, 8, uint32_t, u64, { return x; })
#undef AT_CAST

// The element sizes a kernel of input elements of E bytes reads and writes under cast C.
template <int C, int E> __host__ __device__ constexpr int cast_in() { return Cast<C>::IN ? Cast<C>::IN : E; }
template <int C, int E> __host__ __device__ constexpr int cast_out() { return Cast<C>::OUT ? Cast<C>::OUT : E; }

// A vector (or one element) of sizeof(VI) / IN input elements held in
// registers, every element converted: sizeof(VO) / OUT output elements, in
// order. CAST_NONE: v itself (VI and VO are one type). The element arrays are
// registers after unrolling (no local memory: the compile tests check it).
template <int C, typename VI, typename VO>
__host__ __device__ __forceinline__ VO cast_vec(VI v) {
  if constexpr (C == CAST_NONE) {
    return v;
  } else {
    typedef Cast<C> K;
    constexpr int N = (int)sizeof(VI) / K::IN;
    static_assert(sizeof(VI) % K::IN == 0 && sizeof(VO) == (size_t)N * K::OUT, "cast_vec: N elements in, N out");
    typename Word<K::IN>::T a[N];
    typename Word<K::OUT>::T b[N];
    memcpy(a, &v, sizeof v);
#pragma unroll
    for (int i = 0; i < N; ++i) b[i] = K::conv(a[i]);
    VO o;
    memcpy(&o, b, sizeof o);
    return o;
  }
}

}  // namespace at
