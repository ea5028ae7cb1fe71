// The lane arithmetic of every WebAssembly 2.0 SIMD (v128) instruction, for
// every backend, as semantics.h is for the scalar ones (its naming: the
// instruction name with '.' replaced by '_'). A v128 is two 64-bit words,
// `lo` holding bytes 0-7 of the little-endian vector and `hi` bytes 8-15,
// so lane i of an N-bit shape sits in word i / (64 / N) at bit
// (i % (64 / N)) * N: the same two words that fill two register-bytecode
// slots (docs/architecture.md, "v128 values").
//
// Float lanes follow the scalar functions (canonical NaNs, no FMA, min/max
// and rounding as the scalar instructions; float_arith applies the
// canonical-NaN rule once per vector on the host); integer lanes wrap
// unless the instruction saturates. Lanes are reached through LaneArray:
// shifts on the two words on the GPU, arrays the host compiler vectorises
// on the host. Same rules as semantics.h: no host-only std:: calls.
#pragma once

#include "semantics/semantics.h"

namespace ww::sem {

struct V128 {
  uint64_t lo = 0, hi = 0;
};

WW_HD inline bool operator==(const V128& a, const V128& b) { return a.lo == b.lo && a.hi == b.hi; }
WW_HD inline V128 v128_of(uint64_t lo, uint64_t hi) { return {lo, hi}; }

// ---------------------------------------------------------------- lanes

// Lane i of a vector of T lanes (uint8_t .. uint64_t, or their signed
// kinds), truncated to T.
template <class T>
WW_HD inline T lane(const V128& v, int i) {
  constexpr int kBits = int(sizeof(T)) * 8, kPerWord = 64 / kBits;
  const uint64_t w = i < kPerWord ? v.lo : v.hi;
  if constexpr (kBits == 64) {
    return T(w);
  } else {
    return T(w >> ((i % kPerWord) * kBits));
  }
}

template <class T>
WW_HD inline void set_lane(V128& v, int i, T x) {
  constexpr int kBits = int(sizeof(T)) * 8, kPerWord = 64 / kBits;
  uint64_t& w = i < kPerWord ? v.lo : v.hi;
  if constexpr (kBits == 64) {
    w = uint64_t(x);
  } else {
    const int shift = (i % kPerWord) * kBits;
    const uint64_t mask = ((uint64_t(1) << kBits) - 1) << shift;
    // A negative x sign-extends to all ones above its lane: the mask cuts them.
    w = (w & ~mask) | ((uint64_t(x) << shift) & mask);
  }
}

template <class T>
WW_HD inline constexpr int lanes() {
  return 16 / int(sizeof(T));
}

template <class T>
WW_HD inline V128 splat(T x) {
  V128 r;
  for (int i = 0; i < lanes<T>(); ++i) set_lane<T>(r, i, x);
  return r;
}

// The lanes of a v128 as an array. On the host through memcpy (a
// little-endian copy: lo's bytes are lanes 0..), so that loops over lanes
// are loops g++ vectorises into SSE (over shifts and masks it does not,
// and compiled SIMD code then runs several times slower than the scalar
// build); on the GPU, where a thread is scalar anyway, through
// shifts on the two words, which unrolled loops keep in registers.
template <class T>
struct LaneArray {
  T v[16 / sizeof(T)];
  WW_HD LaneArray() : v{} {}
  WW_HD explicit LaneArray(const V128& x) {
#ifdef __CUDA_ARCH__
    for (int i = 0; i < lanes<T>(); ++i) v[i] = lane<T>(x, i);
#else
    memcpy(v, &x, 16);
#endif
  }
  WW_HD V128 vec() const {
    V128 r;
#ifdef __CUDA_ARCH__
    for (int i = 0; i < lanes<T>(); ++i) set_lane<T>(r, i, v[i]);
#else
    memcpy(&r, v, 16);
#endif
    return r;
  }
};

// r[i] = f(a[i]); lanes of In, results as Out (same lane count and width).
template <class In, class Out, class F>
WW_HD inline V128 map1(const V128& a, F f) {
  static_assert(sizeof(In) == sizeof(Out), "map1 keeps the lane width");
  const LaneArray<In> x(a);
  LaneArray<Out> y;
  for (int i = 0; i < lanes<In>(); ++i) y.v[i] = Out(f(x.v[i]));
  return y.vec();
}

template <class In, class Out, class F>
WW_HD inline V128 map2(const V128& a, const V128& b, F f) {
  static_assert(sizeof(In) == sizeof(Out), "map2 keeps the lane width");
  const LaneArray<In> x(a), z(b);
  LaneArray<Out> y;
  for (int i = 0; i < lanes<In>(); ++i) y.v[i] = Out(f(x.v[i], z.v[i]));
  return y.vec();
}

// Comparison lanes: all ones for true.
template <class T, class F>
WW_HD inline V128 compare(const V128& a, const V128& b, F f) {
  return map2<T, T>(a, b, [&](T x, T y) { return f(x, y) ? T(~T(0)) : T(0); });
}

// ------------------------------------------------------------- splat, lanes

WW_HD inline V128 i8x16_splat(uint32_t x) { return splat<uint8_t>(uint8_t(x)); }
WW_HD inline V128 i16x8_splat(uint32_t x) { return splat<uint16_t>(uint16_t(x)); }
WW_HD inline V128 i32x4_splat(uint32_t x) { return splat<uint32_t>(x); }
WW_HD inline V128 i64x2_splat(uint64_t x) { return splat<uint64_t>(x); }
WW_HD inline V128 f32x4_splat(float x) { return splat<uint32_t>(f32_bits(x)); }
WW_HD inline V128 f64x2_splat(double x) { return splat<uint64_t>(f64_bits(x)); }

// extract_lane_s/_u and replace_lane; `i` is validated below the lane count.
WW_HD inline uint32_t i8x16_extract_lane_s(const V128& v, int i) { return uint32_t(int32_t(lane<int8_t>(v, i))); }
WW_HD inline uint32_t i8x16_extract_lane_u(const V128& v, int i) { return lane<uint8_t>(v, i); }
WW_HD inline uint32_t i16x8_extract_lane_s(const V128& v, int i) { return uint32_t(int32_t(lane<int16_t>(v, i))); }
WW_HD inline uint32_t i16x8_extract_lane_u(const V128& v, int i) { return lane<uint16_t>(v, i); }
WW_HD inline uint32_t i32x4_extract_lane(const V128& v, int i) { return lane<uint32_t>(v, i); }
WW_HD inline uint64_t i64x2_extract_lane(const V128& v, int i) { return lane<uint64_t>(v, i); }
WW_HD inline float f32x4_extract_lane(const V128& v, int i) { return f32_from_bits(lane<uint32_t>(v, i)); }
WW_HD inline double f64x2_extract_lane(const V128& v, int i) { return f64_from_bits(lane<uint64_t>(v, i)); }

template <class T>
WW_HD inline V128 replaced(V128 v, int i, T x) {
  set_lane<T>(v, i, x);
  return v;
}
WW_HD inline V128 i8x16_replace_lane(const V128& v, int i, uint32_t x) { return replaced<uint8_t>(v, i, uint8_t(x)); }
WW_HD inline V128 i16x8_replace_lane(const V128& v, int i, uint32_t x) { return replaced<uint16_t>(v, i, uint16_t(x)); }
WW_HD inline V128 i32x4_replace_lane(const V128& v, int i, uint32_t x) { return replaced<uint32_t>(v, i, x); }
WW_HD inline V128 i64x2_replace_lane(const V128& v, int i, uint64_t x) { return replaced<uint64_t>(v, i, x); }
WW_HD inline V128 f32x4_replace_lane(const V128& v, int i, float x) { return replaced<uint32_t>(v, i, f32_bits(x)); }
WW_HD inline V128 f64x2_replace_lane(const V128& v, int i, double x) { return replaced<uint64_t>(v, i, f64_bits(x)); }

// ------------------------------------------------------ shuffle and swizzle

// Byte i of the result is byte s[i] of a, or 0 when s[i] is 16 or more.
WW_HD inline V128 i8x16_swizzle(const V128& a, const V128& s) {
#ifdef __CUDA_ARCH__
  return map1<uint8_t, uint8_t>(s, [&](uint8_t k) { return k < 16 ? lane<uint8_t>(a, k) : uint8_t(0); });
#else
  uint8_t x[16];
  memcpy(x, &a, 16);
  return map1<uint8_t, uint8_t>(s, [&](uint8_t k) { return k < 16 ? x[k] : uint8_t(0); });
#endif
}

// Byte i is byte idx[i] of a:b (a's 16 bytes, then b's); indices validated
// below 32. The immediate's 16 bytes are packed as a V128 too.
WW_HD inline V128 i8x16_shuffle(const V128& a, const V128& b, const V128& idx) {
#ifdef __CUDA_ARCH__
  return map1<uint8_t, uint8_t>(idx,
                                [&](uint8_t k) { return k < 16 ? lane<uint8_t>(a, k) : lane<uint8_t>(b, k - 16); });
#else
  uint8_t x[32];
  memcpy(x, &a, 16);
  memcpy(x + 16, &b, 16);
  return map1<uint8_t, uint8_t>(idx, [&](uint8_t k) { return x[k & 31]; });
#endif
}

// ------------------------------------------------------------------ bitwise

WW_HD inline V128 v128_not(const V128& a) { return {~a.lo, ~a.hi}; }
WW_HD inline V128 v128_and(const V128& a, const V128& b) { return {a.lo & b.lo, a.hi & b.hi}; }
WW_HD inline V128 v128_andnot(const V128& a, const V128& b) { return {a.lo & ~b.lo, a.hi & ~b.hi}; }
WW_HD inline V128 v128_or(const V128& a, const V128& b) { return {a.lo | b.lo, a.hi | b.hi}; }
WW_HD inline V128 v128_xor(const V128& a, const V128& b) { return {a.lo ^ b.lo, a.hi ^ b.hi}; }
// Bits of a where c is 1, of b where it is 0.
WW_HD inline V128 v128_bitselect(const V128& a, const V128& b, const V128& c) {
  return {(a.lo & c.lo) | (b.lo & ~c.lo), (a.hi & c.hi) | (b.hi & ~c.hi)};
}
WW_HD inline uint32_t v128_any_true(const V128& a) { return (a.lo | a.hi) != 0; }

// ------------------------------------------------------------ integer lanes

template <class T>
WW_HD inline uint32_t all_true(const V128& a) {
  for (int i = 0; i < lanes<T>(); ++i)
    if (lane<T>(a, i) == 0) return 0;
  return 1;
}

// Bit i is the top bit of lane i.
template <class S>
WW_HD inline uint32_t bitmask(const V128& a) {
  uint32_t m = 0;
  for (int i = 0; i < lanes<S>(); ++i) m |= uint32_t(lane<S>(a, i) < 0) << i;
  return m;
}

// Shift counts are taken modulo the lane width.
template <class T>
WW_HD inline V128 shift_left(const V128& a, uint32_t n) {
  const int k = int(n % (sizeof(T) * 8));
  return map1<T, T>(a, [&](T x) { return T(x << k); });
}
template <class T>  // signed T: arithmetic, unsigned: logical
WW_HD inline V128 shift_right(const V128& a, uint32_t n) {
  const int k = int(n % (sizeof(T) * 8));
  return map1<T, T>(a, [&](T x) { return T(x >> k); });
}

template <class S>
WW_HD inline S wrapping_abs(S x) {
  return x < 0 ? S(0 - uint64_t(x)) : x;  // the most negative value stays itself
}

template <class T, class Wide>
WW_HD inline T saturate(Wide x, Wide lo, Wide hi) {
  return T(x < lo ? lo : x > hi ? hi : x);
}

WW_HD inline uint8_t popcount8(uint8_t x) {
  x = uint8_t(x - ((x >> 1) & 0x55));
  x = uint8_t((x & 0x33) + ((x >> 2) & 0x33));
  return uint8_t((x + (x >> 4)) & 0x0f);
}

// The four integer shapes share their lane-wise operations.
#define WW_SIMD_INT_SHAPE(P, S, U)                                                        \
  WW_HD inline V128 P##_add(const V128& a, const V128& b) {                               \
    return map2<U, U>(a, b, [](U x, U y) { return U(x + y); });                           \
  }                                                                                       \
  WW_HD inline V128 P##_sub(const V128& a, const V128& b) {                               \
    return map2<U, U>(a, b, [](U x, U y) { return U(x - y); });                           \
  }                                                                                       \
  WW_HD inline V128 P##_neg(const V128& a) {                                              \
    return map1<U, U>(a, [](U x) { return U(U(0) - x); });                                \
  }                                                                                       \
  WW_HD inline V128 P##_abs(const V128& a) {                                              \
    return map1<S, S>(a, [](S x) { return wrapping_abs(x); });                            \
  }                                                                                       \
  WW_HD inline V128 P##_eq(const V128& a, const V128& b) {                                \
    return compare<U>(a, b, [](U x, U y) { return x == y; });                             \
  }                                                                                       \
  WW_HD inline V128 P##_ne(const V128& a, const V128& b) {                                \
    return compare<U>(a, b, [](U x, U y) { return x != y; });                             \
  }                                                                                       \
  WW_HD inline V128 P##_lt_s(const V128& a, const V128& b) {                              \
    return compare<S>(a, b, [](S x, S y) { return x < y; });                              \
  }                                                                                       \
  WW_HD inline V128 P##_gt_s(const V128& a, const V128& b) {                              \
    return compare<S>(a, b, [](S x, S y) { return x > y; });                              \
  }                                                                                       \
  WW_HD inline V128 P##_le_s(const V128& a, const V128& b) {                              \
    return compare<S>(a, b, [](S x, S y) { return x <= y; });                             \
  }                                                                                       \
  WW_HD inline V128 P##_ge_s(const V128& a, const V128& b) {                              \
    return compare<S>(a, b, [](S x, S y) { return x >= y; });                             \
  }                                                                                       \
  WW_HD inline uint32_t P##_all_true(const V128& a) { return all_true<U>(a); }            \
  WW_HD inline uint32_t P##_bitmask(const V128& a) { return bitmask<S>(a); }              \
  WW_HD inline V128 P##_shl(const V128& a, uint32_t n) { return shift_left<U>(a, n); }    \
  WW_HD inline V128 P##_shr_s(const V128& a, uint32_t n) { return shift_right<S>(a, n); } \
  WW_HD inline V128 P##_shr_u(const V128& a, uint32_t n) { return shift_right<U>(a, n); }
WW_SIMD_INT_SHAPE(i8x16, int8_t, uint8_t)
WW_SIMD_INT_SHAPE(i16x8, int16_t, uint16_t)
WW_SIMD_INT_SHAPE(i32x4, int32_t, uint32_t)
WW_SIMD_INT_SHAPE(i64x2, int64_t, uint64_t)
#undef WW_SIMD_INT_SHAPE

// The unsigned comparisons and min/max (all shapes but i64x2), and the
// saturating arithmetic and rounding average (i8x16 and i16x8).
#define WW_SIMD_UNSIGNED_ORDER(P, S, U)                              \
  WW_HD inline V128 P##_lt_u(const V128& a, const V128& b) {         \
    return compare<U>(a, b, [](U x, U y) { return x < y; });         \
  }                                                                  \
  WW_HD inline V128 P##_gt_u(const V128& a, const V128& b) {         \
    return compare<U>(a, b, [](U x, U y) { return x > y; });         \
  }                                                                  \
  WW_HD inline V128 P##_le_u(const V128& a, const V128& b) {         \
    return compare<U>(a, b, [](U x, U y) { return x <= y; });        \
  }                                                                  \
  WW_HD inline V128 P##_ge_u(const V128& a, const V128& b) {         \
    return compare<U>(a, b, [](U x, U y) { return x >= y; });        \
  }                                                                  \
  WW_HD inline V128 P##_min_s(const V128& a, const V128& b) {        \
    return map2<S, S>(a, b, [](S x, S y) { return x < y ? x : y; }); \
  }                                                                  \
  WW_HD inline V128 P##_min_u(const V128& a, const V128& b) {        \
    return map2<U, U>(a, b, [](U x, U y) { return x < y ? x : y; }); \
  }                                                                  \
  WW_HD inline V128 P##_max_s(const V128& a, const V128& b) {        \
    return map2<S, S>(a, b, [](S x, S y) { return x > y ? x : y; }); \
  }                                                                  \
  WW_HD inline V128 P##_max_u(const V128& a, const V128& b) {        \
    return map2<U, U>(a, b, [](U x, U y) { return x > y ? x : y; }); \
  }
WW_SIMD_UNSIGNED_ORDER(i8x16, int8_t, uint8_t)
WW_SIMD_UNSIGNED_ORDER(i16x8, int16_t, uint16_t)
WW_SIMD_UNSIGNED_ORDER(i32x4, int32_t, uint32_t)
#undef WW_SIMD_UNSIGNED_ORDER

#define WW_SIMD_SATURATING(P, S, U, SMIN, SMAX, UMAX)                                                   \
  WW_HD inline V128 P##_add_sat_s(const V128& a, const V128& b) {                                       \
    return map2<S, S>(a, b, [](S x, S y) { return saturate<S, int32_t>(int32_t(x) + y, SMIN, SMAX); }); \
  }                                                                                                     \
  WW_HD inline V128 P##_add_sat_u(const V128& a, const V128& b) {                                       \
    return map2<U, U>(a, b, [](U x, U y) { return saturate<U, int32_t>(int32_t(x) + y, 0, UMAX); });    \
  }                                                                                                     \
  WW_HD inline V128 P##_sub_sat_s(const V128& a, const V128& b) {                                       \
    return map2<S, S>(a, b, [](S x, S y) { return saturate<S, int32_t>(int32_t(x) - y, SMIN, SMAX); }); \
  }                                                                                                     \
  WW_HD inline V128 P##_sub_sat_u(const V128& a, const V128& b) {                                       \
    return map2<U, U>(a, b, [](U x, U y) { return saturate<U, int32_t>(int32_t(x) - y, 0, UMAX); });    \
  }                                                                                                     \
  WW_HD inline V128 P##_avgr_u(const V128& a, const V128& b) {                                          \
    return map2<U, U>(a, b, [](U x, U y) { return U((uint32_t(x) + y + 1) >> 1); });                    \
  }
WW_SIMD_SATURATING(i8x16, int8_t, uint8_t, -128, 127, 255)
WW_SIMD_SATURATING(i16x8, int16_t, uint16_t, -32768, 32767, 65535)
#undef WW_SIMD_SATURATING

WW_HD inline V128 i16x8_mul(const V128& a, const V128& b) {
  return map2<uint16_t, uint16_t>(a, b, [](uint16_t x, uint16_t y) { return uint16_t(uint32_t(x) * y); });
}
WW_HD inline V128 i32x4_mul(const V128& a, const V128& b) {
  return map2<uint32_t, uint32_t>(a, b, [](uint32_t x, uint32_t y) { return uint32_t(x * y); });
}
WW_HD inline V128 i64x2_mul(const V128& a, const V128& b) {
  return map2<uint64_t, uint64_t>(a, b, [](uint64_t x, uint64_t y) { return x * y; });
}
WW_HD inline V128 i8x16_popcnt(const V128& a) { return map1<uint8_t, uint8_t>(a, popcount8); }

// (x * y + 2^14) >> 15, saturated: only -32768 * -32768 overflows.
WW_HD inline V128 i16x8_q15mulr_sat_s(const V128& a, const V128& b) {
  return map2<int16_t, int16_t>(a, b, [](int16_t x, int16_t y) {
    return saturate<int16_t, int32_t>((int32_t(x) * y + 0x4000) >> 15, -32768, 32767);
  });
}

// Lane i: a[2i] * b[2i] + a[2i+1] * b[2i+1], wrapping in 32 bits.
WW_HD inline V128 i32x4_dot_i16x8_s(const V128& a, const V128& b) {
  V128 r;
  for (int i = 0; i < 4; ++i) {
    const int32_t p0 = int32_t(lane<int16_t>(a, 2 * i)) * lane<int16_t>(b, 2 * i);
    const int32_t p1 = int32_t(lane<int16_t>(a, 2 * i + 1)) * lane<int16_t>(b, 2 * i + 1);
    set_lane<uint32_t>(r, i, uint32_t(p0) + uint32_t(p1));
  }
  return r;
}

// ------------------------------------------- widening, narrowing, pairwise

// Lanes `first`.. of a's narrow N lanes, each extended (signed or not by
// the type of N) to a wide lane W.
template <class N, class W>
WW_HD inline V128 extend(const V128& a, int first) {
  const LaneArray<N> x(a);
  LaneArray<W> r;
  for (int i = 0; i < lanes<W>(); ++i) r.v[i] = W(x.v[first + i]);
  return r.vec();
}

template <class N, class W>
WW_HD inline V128 extmul(const V128& a, const V128& b, int first) {
  const LaneArray<N> x(a), y(b);
  LaneArray<W> r;
  for (int i = 0; i < lanes<W>(); ++i) r.v[i] = W(W(x.v[first + i]) * W(y.v[first + i]));
  return r.vec();
}

template <class N, class W>
WW_HD inline V128 extadd_pairwise(const V128& a) {
  const LaneArray<N> x(a);
  LaneArray<W> r;
  for (int i = 0; i < lanes<W>(); ++i) r.v[i] = W(W(x.v[2 * i]) + W(x.v[2 * i + 1]));
  return r.vec();
}

// Wide signed lanes of a, then of b, saturated into the narrow type N.
template <class Wide, class N>
WW_HD inline V128 narrow(const V128& a, const V128& b, int32_t lo, int32_t hi) {
  const LaneArray<Wide> x(a), y(b);
  LaneArray<N> r;
  constexpr int kHalf = lanes<Wide>();
  for (int i = 0; i < kHalf; ++i) {
    r.v[i] = saturate<N, int32_t>(int32_t(x.v[i]), lo, hi);
    r.v[kHalf + i] = saturate<N, int32_t>(int32_t(y.v[i]), lo, hi);
  }
  return r.vec();
}

#define WW_SIMD_WIDEN(P, FROM, NS, NU, WS, WU)                                                                  \
  WW_HD inline V128 P##_extend_low_##FROM##_s(const V128& a) { return extend<NS, WS>(a, 0); }                   \
  WW_HD inline V128 P##_extend_high_##FROM##_s(const V128& a) { return extend<NS, WS>(a, lanes<WS>()); }        \
  WW_HD inline V128 P##_extend_low_##FROM##_u(const V128& a) { return extend<NU, WU>(a, 0); }                   \
  WW_HD inline V128 P##_extend_high_##FROM##_u(const V128& a) { return extend<NU, WU>(a, lanes<WU>()); }        \
  WW_HD inline V128 P##_extmul_low_##FROM##_s(const V128& a, const V128& b) { return extmul<NS, WS>(a, b, 0); } \
  WW_HD inline V128 P##_extmul_high_##FROM##_s(const V128& a, const V128& b) {                                  \
    return extmul<NS, WS>(a, b, lanes<WS>());                                                                   \
  }                                                                                                             \
  WW_HD inline V128 P##_extmul_low_##FROM##_u(const V128& a, const V128& b) { return extmul<NU, WU>(a, b, 0); } \
  WW_HD inline V128 P##_extmul_high_##FROM##_u(const V128& a, const V128& b) {                                  \
    return extmul<NU, WU>(a, b, lanes<WU>());                                                                   \
  }
WW_SIMD_WIDEN(i16x8, i8x16, int8_t, uint8_t, int16_t, uint16_t)
WW_SIMD_WIDEN(i32x4, i16x8, int16_t, uint16_t, int32_t, uint32_t)
WW_SIMD_WIDEN(i64x2, i32x4, int32_t, uint32_t, int64_t, uint64_t)
#undef WW_SIMD_WIDEN

WW_HD inline V128 i16x8_extadd_pairwise_i8x16_s(const V128& a) { return extadd_pairwise<int8_t, int16_t>(a); }
WW_HD inline V128 i16x8_extadd_pairwise_i8x16_u(const V128& a) { return extadd_pairwise<uint8_t, uint16_t>(a); }
WW_HD inline V128 i32x4_extadd_pairwise_i16x8_s(const V128& a) { return extadd_pairwise<int16_t, int32_t>(a); }
WW_HD inline V128 i32x4_extadd_pairwise_i16x8_u(const V128& a) { return extadd_pairwise<uint16_t, uint32_t>(a); }

WW_HD inline V128 i8x16_narrow_i16x8_s(const V128& a, const V128& b) {
  return narrow<int16_t, int8_t>(a, b, -128, 127);
}
WW_HD inline V128 i8x16_narrow_i16x8_u(const V128& a, const V128& b) { return narrow<int16_t, uint8_t>(a, b, 0, 255); }
WW_HD inline V128 i16x8_narrow_i32x4_s(const V128& a, const V128& b) {
  return narrow<int32_t, int16_t>(a, b, -32768, 32767);
}
WW_HD inline V128 i16x8_narrow_i32x4_u(const V128& a, const V128& b) {
  return narrow<int32_t, uint16_t>(a, b, 0, 65535);
}

// -------------------------------------------------------------- float lanes

// The scalar instruction on every lane (its NaN, rounding and sign rules).
template <class F>
WW_HD inline V128 f32_lanes(const V128& a, F f) {
  return map1<uint32_t, uint32_t>(a, [&](uint32_t x) { return f32_bits(f(f32_from_bits(x))); });
}
template <class F>
WW_HD inline V128 f32_lanes(const V128& a, const V128& b, F f) {
  return map2<uint32_t, uint32_t>(
      a, b, [&](uint32_t x, uint32_t y) { return f32_bits(f(f32_from_bits(x), f32_from_bits(y))); });
}
template <class F>
WW_HD inline V128 f64_lanes(const V128& a, F f) {
  return map1<uint64_t, uint64_t>(a, [&](uint64_t x) { return f64_bits(f(f64_from_bits(x))); });
}
template <class F>
WW_HD inline V128 f64_lanes(const V128& a, const V128& b, F f) {
  return map2<uint64_t, uint64_t>(
      a, b, [&](uint64_t x, uint64_t y) { return f64_bits(f(f64_from_bits(x), f64_from_bits(y))); });
}

WW_HD inline float canon(float r) { return canon32(r); }
WW_HD inline double canon(double r) { return canon64(r); }
// A float type's bits: their unsigned type, and the value from them.
template <class T>
struct FloatBits;
template <>
struct FloatBits<float> {
  using type = uint32_t;
  static WW_HD float value(uint32_t b) { return f32_from_bits(b); }
  static WW_HD uint32_t bits(float f) { return f32_bits(f); }
};
template <>
struct FloatBits<double> {
  using type = uint64_t;
  static WW_HD double value(uint64_t b) { return f64_from_bits(b); }
  static WW_HD uint64_t bits(double d) { return f64_bits(d); }
};

// Arithmetic whose only NaN rule is "a NaN result is the canonical NaN"
// (add, sub, mul, div, sqrt: semantics.h's NAME_raw forms). On the host:
// the hardware's lanes in one loop over float arrays, then, in the rare
// vector with a NaN lane, the canonical NaN there; the per-lane branch of
// the scalar functions keeps g++ from vectorising (compiled, a saxpy built
// with -msimd128 would run slower than its scalar build). On the GPU,
// whose thread is scalar, the scalar functions lane by lane.
template <class T, class Raw>
WW_HD inline V128 float_arith(const V128& a, const V128& b, Raw raw) {
#ifdef __CUDA_ARCH__
  using B = typename FloatBits<T>::type;
  return map2<B, B>(
      a, b, [&](B x, B y) { return FloatBits<T>::bits(canon(raw(FloatBits<T>::value(x), FloatBits<T>::value(y)))); });
#else
  constexpr int n = 16 / int(sizeof(T));
  T x[n], z[n], y[n];
  memcpy(x, &a, 16);
  memcpy(z, &b, 16);
  bool nan = false;
  for (int i = 0; i < n; ++i) y[i] = raw(x[i], z[i]);
  for (int i = 0; i < n; ++i) nan |= y[i] != y[i];
  if (WW_NAN_UNLIKELY(nan))
    for (int i = 0; i < n; ++i) y[i] = canon(y[i]);
  V128 r;
  memcpy(&r, y, 16);
  return r;
#endif
}
template <class T, class Raw>
WW_HD inline V128 float_arith(const V128& a, Raw raw) {
  return float_arith<T>(a, a, [&](T x, T) { return raw(x); });
}

// pmin/pmax are C's `b < a ? b : a` / `a < b ? b : a`: an operand comes
// back as it is, NaN payload and all.
#define WW_SIMD_FLOAT_SHAPE(P, S, T)                                                                    \
  WW_HD inline V128 P##_add(const V128& a, const V128& b) { return float_arith<T>(a, b, S##_add_raw); } \
  WW_HD inline V128 P##_sub(const V128& a, const V128& b) { return float_arith<T>(a, b, S##_sub_raw); } \
  WW_HD inline V128 P##_mul(const V128& a, const V128& b) { return float_arith<T>(a, b, S##_mul_raw); } \
  WW_HD inline V128 P##_div(const V128& a, const V128& b) { return float_arith<T>(a, b, S##_div_raw); } \
  WW_HD inline V128 P##_min(const V128& a, const V128& b) { return S##_lanes(a, b, S##_min); }          \
  WW_HD inline V128 P##_max(const V128& a, const V128& b) { return S##_lanes(a, b, S##_max); }          \
  WW_HD inline V128 P##_pmin(const V128& a, const V128& b) {                                            \
    return S##_lanes(a, b, [](T x, T y) { return y < x ? y : x; });                                     \
  }                                                                                                     \
  WW_HD inline V128 P##_pmax(const V128& a, const V128& b) {                                            \
    return S##_lanes(a, b, [](T x, T y) { return x < y ? y : x; });                                     \
  }                                                                                                     \
  WW_HD inline V128 P##_abs(const V128& a) { return S##_lanes(a, S##_abs); }                            \
  WW_HD inline V128 P##_neg(const V128& a) { return S##_lanes(a, S##_neg); }                            \
  WW_HD inline V128 P##_sqrt(const V128& a) { return float_arith<T>(a, S##_sqrt_raw); }                 \
  WW_HD inline V128 P##_ceil(const V128& a) { return S##_lanes(a, S##_ceil); }                          \
  WW_HD inline V128 P##_floor(const V128& a) { return S##_lanes(a, S##_floor); }                        \
  WW_HD inline V128 P##_trunc(const V128& a) { return S##_lanes(a, S##_trunc); }                        \
  WW_HD inline V128 P##_nearest(const V128& a) { return S##_lanes(a, S##_nearest); }
WW_SIMD_FLOAT_SHAPE(f32x4, f32, float)
WW_SIMD_FLOAT_SHAPE(f64x2, f64, double)
#undef WW_SIMD_FLOAT_SHAPE

// Float comparisons: all ones for true; NaN compares unequal to everything.
#define WW_SIMD_FLOAT_COMPARE(P, U, T, FROM)                              \
  WW_HD inline V128 P##_eq(const V128& a, const V128& b) {                \
    return compare<U>(a, b, [](U x, U y) { return FROM(x) == FROM(y); }); \
  }                                                                       \
  WW_HD inline V128 P##_ne(const V128& a, const V128& b) {                \
    return compare<U>(a, b, [](U x, U y) { return FROM(x) != FROM(y); }); \
  }                                                                       \
  WW_HD inline V128 P##_lt(const V128& a, const V128& b) {                \
    return compare<U>(a, b, [](U x, U y) { return FROM(x) < FROM(y); });  \
  }                                                                       \
  WW_HD inline V128 P##_gt(const V128& a, const V128& b) {                \
    return compare<U>(a, b, [](U x, U y) { return FROM(x) > FROM(y); });  \
  }                                                                       \
  WW_HD inline V128 P##_le(const V128& a, const V128& b) {                \
    return compare<U>(a, b, [](U x, U y) { return FROM(x) <= FROM(y); }); \
  }                                                                       \
  WW_HD inline V128 P##_ge(const V128& a, const V128& b) {                \
    return compare<U>(a, b, [](U x, U y) { return FROM(x) >= FROM(y); }); \
  }
WW_SIMD_FLOAT_COMPARE(f32x4, uint32_t, float, f32_from_bits)
WW_SIMD_FLOAT_COMPARE(f64x2, uint64_t, double, f64_from_bits)
#undef WW_SIMD_FLOAT_COMPARE

// -------------------------------------------------------------- conversions

WW_HD inline V128 i32x4_trunc_sat_f32x4_s(const V128& a) {
  return map1<uint32_t, uint32_t>(a, [](uint32_t x) { return i32_trunc_sat_f32_s(f32_from_bits(x)); });
}
WW_HD inline V128 i32x4_trunc_sat_f32x4_u(const V128& a) {
  return map1<uint32_t, uint32_t>(a, [](uint32_t x) { return i32_trunc_sat_f32_u(f32_from_bits(x)); });
}
WW_HD inline V128 f32x4_convert_i32x4_s(const V128& a) {
  return map1<uint32_t, uint32_t>(a, [](uint32_t x) { return f32_bits(f32_convert_i32_s(x)); });
}
WW_HD inline V128 f32x4_convert_i32x4_u(const V128& a) {
  return map1<uint32_t, uint32_t>(a, [](uint32_t x) { return f32_bits(f32_convert_i32_u(x)); });
}
// The two f64 lanes into i32 lanes 0 and 1; lanes 2 and 3 are zero.
WW_HD inline V128 i32x4_trunc_sat_f64x2_s_zero(const V128& a) {
  return {uint64_t(i32_trunc_sat_f64_s(f64_from_bits(a.lo))) | uint64_t(i32_trunc_sat_f64_s(f64_from_bits(a.hi))) << 32,
          0};
}
WW_HD inline V128 i32x4_trunc_sat_f64x2_u_zero(const V128& a) {
  return {uint64_t(i32_trunc_sat_f64_u(f64_from_bits(a.lo))) | uint64_t(i32_trunc_sat_f64_u(f64_from_bits(a.hi))) << 32,
          0};
}
WW_HD inline V128 f64x2_convert_low_i32x4_s(const V128& a) {
  return {f64_bits(f64_convert_i32_s(uint32_t(a.lo))), f64_bits(f64_convert_i32_s(uint32_t(a.lo >> 32)))};
}
WW_HD inline V128 f64x2_convert_low_i32x4_u(const V128& a) {
  return {f64_bits(f64_convert_i32_u(uint32_t(a.lo))), f64_bits(f64_convert_i32_u(uint32_t(a.lo >> 32)))};
}
WW_HD inline V128 f32x4_demote_f64x2_zero(const V128& a) {
  return {uint64_t(f32_bits(f32_demote_f64(f64_from_bits(a.lo)))) |
              uint64_t(f32_bits(f32_demote_f64(f64_from_bits(a.hi)))) << 32,
          0};
}
WW_HD inline V128 f64x2_promote_low_f32x4(const V128& a) {
  return {f64_bits(f64_promote_f32(f32_from_bits(uint32_t(a.lo)))),
          f64_bits(f64_promote_f32(f32_from_bits(uint32_t(a.lo >> 32))))};
}

// ------------------------------------------- relaxed SIMD (WebAssembly 3.0)

// Every relaxed instruction gives the outcome of the specification's
// deterministic profile (its first choice), on every backend and tier:
// swizzle, trunc_sat, bitselect, min, max and q15mulr_sat_s are the
// non-relaxed ops (the translator lowers to them); these are the rest.

// madd: unfused, fmul then fadd (two roundings); nmadd negates the first
// operand.
WW_HD inline V128 f32x4_relaxed_madd(const V128& a, const V128& b, const V128& c) {
  return f32x4_add(f32x4_mul(a, b), c);
}
WW_HD inline V128 f32x4_relaxed_nmadd(const V128& a, const V128& b, const V128& c) {
  return f32x4_add(f32x4_mul(f32x4_neg(a), b), c);
}
WW_HD inline V128 f64x2_relaxed_madd(const V128& a, const V128& b, const V128& c) {
  return f64x2_add(f64x2_mul(a, b), c);
}
WW_HD inline V128 f64x2_relaxed_nmadd(const V128& a, const V128& b, const V128& c) {
  return f64x2_add(f64x2_mul(f64x2_neg(a), b), c);
}

// Lane i: a[2i] * b[2i] + a[2i+1] * b[2i+1] with both operands signed, the
// sum saturated to 16 bits (the specification's ivdotsat).
WW_HD inline V128 i16x8_relaxed_dot_i8x16_i7x16_s(const V128& a, const V128& b) {
  V128 r;
  for (int i = 0; i < 8; ++i) {
    const int32_t p0 = int32_t(lane<int8_t>(a, 2 * i)) * lane<int8_t>(b, 2 * i);
    const int32_t p1 = int32_t(lane<int8_t>(a, 2 * i + 1)) * lane<int8_t>(b, 2 * i + 1);
    set_lane<int16_t>(r, i, saturate<int16_t, int32_t>(p0 + p1, -32768, 32767));
  }
  return r;
}
// The 16-bit dot product above, its lane pairs added into 32 bits, plus c
// (wrapping).
WW_HD inline V128 i32x4_relaxed_dot_i8x16_i7x16_add_s(const V128& a, const V128& b, const V128& c) {
  const V128 d = i16x8_relaxed_dot_i8x16_i7x16_s(a, b);
  V128 r;
  for (int i = 0; i < 4; ++i) {
    const int32_t pair = int32_t(lane<int16_t>(d, 2 * i)) + lane<int16_t>(d, 2 * i + 1);
    set_lane<uint32_t>(r, i, uint32_t(pair) + lane<uint32_t>(c, i));
  }
  return r;
}

// -------------------------------------------------------------- memory

// What the vector loads make of the bytes they read (the executor reads
// them little-endian, bounds checked, as for the scalar loads): 8 bytes
// widened lane by lane, one lane splatted, or one lane into a zero vector.
WW_HD inline V128 v128_load8x8_s(uint64_t bytes) { return extend<int8_t, int16_t>({bytes, 0}, 0); }
WW_HD inline V128 v128_load8x8_u(uint64_t bytes) { return extend<uint8_t, uint16_t>({bytes, 0}, 0); }
WW_HD inline V128 v128_load16x4_s(uint64_t bytes) { return extend<int16_t, int32_t>({bytes, 0}, 0); }
WW_HD inline V128 v128_load16x4_u(uint64_t bytes) { return extend<uint16_t, uint32_t>({bytes, 0}, 0); }
WW_HD inline V128 v128_load32x2_s(uint64_t bytes) { return extend<int32_t, int64_t>({bytes, 0}, 0); }
WW_HD inline V128 v128_load32x2_u(uint64_t bytes) { return extend<uint32_t, uint64_t>({bytes, 0}, 0); }
WW_HD inline V128 v128_load8_splat(uint32_t x) { return i8x16_splat(x); }
WW_HD inline V128 v128_load16_splat(uint32_t x) { return i16x8_splat(x); }
WW_HD inline V128 v128_load32_splat(uint32_t x) { return i32x4_splat(x); }
WW_HD inline V128 v128_load64_splat(uint64_t x) { return i64x2_splat(x); }
WW_HD inline V128 v128_load32_zero(uint32_t x) { return {x, 0}; }
WW_HD inline V128 v128_load64_zero(uint64_t x) { return {x, 0}; }

}  // namespace ww::sem
