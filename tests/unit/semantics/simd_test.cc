// The SIMD lane arithmetic (semantics/simd.h). Expected values come from
// the spec's simd_*.wast files (cited by file) or from working the lane
// arithmetic by hand, never from the code under test.
#include "semantics/simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ww::sem {
namespace {

template <class T>
V128 vec(std::initializer_list<T> xs) {
  V128 v;
  int i = 0;
  for (T x : xs) set_lane<T>(v, i++, x);
  return v;
}
template <class T>
T at(const V128& v, int i) {
  return lane<T>(v, i);
}
V128 f32v(float a, float b, float c, float d) {
  return vec<uint32_t>({f32_bits(a), f32_bits(b), f32_bits(c), f32_bits(d)});
}
V128 f64v(double a, double b) { return vec<uint64_t>({f64_bits(a), f64_bits(b)}); }

TEST(Simd, LanesAreLittleEndianInTwoWords) {
  V128 v{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  EXPECT_EQ(at<uint8_t>(v, 0), 0x00);
  EXPECT_EQ(at<uint8_t>(v, 9), 0x09);
  EXPECT_EQ(at<uint16_t>(v, 3), 0x0706);
  EXPECT_EQ(at<uint32_t>(v, 2), 0x0b0a0908u);
  EXPECT_EQ(at<uint64_t>(v, 1), 0x0f0e0d0c0b0a0908ull);
  set_lane<int8_t>(v, 15, int8_t(-1));  // the sign bits must not leak into other lanes
  EXPECT_EQ(v.hi, 0xff0e0d0c0b0a0908ull);
  EXPECT_EQ(v.lo, 0x0706050403020100ull);
  set_lane<int16_t>(v, 0, int16_t(-2));
  EXPECT_EQ(v.lo, 0x070605040302fffeull);
}

TEST(Simd, SplatExtractReplace) {
  EXPECT_EQ(i8x16_splat(0x1ff), (V128{0xffffffffffffffffull, 0xffffffffffffffffull}));  // simd_splat: wraps
  EXPECT_EQ(i16x8_splat(0x12345), (V128{0x2345234523452345ull, 0x2345234523452345ull}));
  const V128 v = i8x16_splat(0x80);
  EXPECT_EQ(i8x16_extract_lane_s(v, 3), 0xffffff80u);  // simd_lane: -128
  EXPECT_EQ(i8x16_extract_lane_u(v, 3), 0x80u);
  EXPECT_EQ(i16x8_extract_lane_s(i16x8_splat(0x8000), 7), 0xffff8000u);
  const V128 r = i32x4_replace_lane(i32x4_splat(1), 2, 0xdeadbeefu);
  EXPECT_EQ(at<uint32_t>(r, 2), 0xdeadbeefu);
  EXPECT_EQ(at<uint32_t>(r, 1), 1u);
  EXPECT_EQ(at<uint32_t>(r, 3), 1u);
  EXPECT_EQ(f64x2_extract_lane(f64x2_replace_lane(f64x2_splat(1.5), 1, -0.0), 1), -0.0);
  EXPECT_EQ(f64_bits(f64x2_extract_lane(f64x2_replace_lane(f64x2_splat(1.5), 1, -0.0), 1)), kF64SignBit);
}

TEST(Simd, SwizzleAndShuffleIndexRules) {
  const V128 a{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  const V128 b{0x1716151413121110ull, 0x1f1e1d1c1b1a1918ull};
  // simd_swizzle: indices of 16 and more, 0x80 included, give 0.
  const V128 s = vec<uint8_t>({15, 0, 16, 0x80, 255, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 31});
  const V128 r = i8x16_swizzle(a, s);
  EXPECT_EQ(at<uint8_t>(r, 0), 15);
  EXPECT_EQ(at<uint8_t>(r, 1), 0);
  EXPECT_EQ(at<uint8_t>(r, 2), 0);
  EXPECT_EQ(at<uint8_t>(r, 3), 0);
  EXPECT_EQ(at<uint8_t>(r, 4), 0);
  EXPECT_EQ(at<uint8_t>(r, 14), 10);
  EXPECT_EQ(at<uint8_t>(r, 15), 0);
  // simd_shuffle: 16..31 pick from the second operand.
  const V128 idx = vec<uint8_t>({31, 0, 16, 15, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22});
  const V128 t = i8x16_shuffle(a, b, idx);
  EXPECT_EQ(at<uint8_t>(t, 0), 0x1f);
  EXPECT_EQ(at<uint8_t>(t, 1), 0x00);
  EXPECT_EQ(at<uint8_t>(t, 2), 0x10);
  EXPECT_EQ(at<uint8_t>(t, 3), 0x0f);
  EXPECT_EQ(at<uint8_t>(t, 15), 0x16);
}

TEST(Simd, Bitwise) {
  const V128 a{0xff00ff00ff00ff00ull, 0x0123456789abcdefull}, b{0x0ff00ff00ff00ff0ull, 0xffffffff00000000ull};
  EXPECT_EQ(v128_andnot(a, b), (V128{0xf000f000f000f000ull, 0x0000000089abcdefull}));
  // simd_bitwise: bitselect takes a's bits where the mask is 1.
  const V128 m{0xffffffff00000000ull, 0x00000000ffffffffull};
  EXPECT_EQ(v128_bitselect(a, b, m), (V128{0xff00ff000ff00ff0ull, 0xffffffff89abcdefull}));
  EXPECT_EQ(v128_any_true(V128{0, 0}), 0u);
  EXPECT_EQ(v128_any_true(V128{0, 1ull << 63}), 1u);
  EXPECT_EQ(i32x4_all_true(vec<uint32_t>({1, 2, 3, 0})), 0u);
  EXPECT_EQ(i16x8_all_true(i16x8_splat(0x100)), 1u);
  EXPECT_EQ(i64x2_all_true(V128{1, 0}), 0u);
}

TEST(Simd, IntegerWrapsAndSaturates) {
  // simd_i8x16_sat_arith
  EXPECT_EQ(at<int8_t>(i8x16_add_sat_s(i8x16_splat(127), i8x16_splat(1)), 5), 127);
  EXPECT_EQ(at<int8_t>(i8x16_add_sat_s(i8x16_splat(0x80), i8x16_splat(0xff)), 5), -128);
  EXPECT_EQ(at<uint8_t>(i8x16_add_sat_u(i8x16_splat(255), i8x16_splat(1)), 0), 255);
  EXPECT_EQ(at<uint8_t>(i8x16_sub_sat_u(i8x16_splat(0), i8x16_splat(1)), 0), 0);
  EXPECT_EQ(at<int16_t>(i16x8_sub_sat_s(i16x8_splat(0x8000), i16x8_splat(1)), 3), -32768);
  EXPECT_EQ(at<uint8_t>(i8x16_add(i8x16_splat(255), i8x16_splat(2)), 0), 1);  // wraps
  EXPECT_EQ(at<int8_t>(i8x16_abs(i8x16_splat(0x80)), 0), -128);               // stays
  EXPECT_EQ(at<int8_t>(i8x16_neg(i8x16_splat(0x80)), 0), -128);
  EXPECT_EQ(at<uint64_t>(i64x2_mul(i64x2_splat(1ull << 63), i64x2_splat(2)), 1), 0u);
  // avgr_u rounds up: (255 + 254 + 1) / 2, (1 + 2 + 1) / 2
  EXPECT_EQ(at<uint8_t>(i8x16_avgr_u(i8x16_splat(255), i8x16_splat(254)), 0), 255);
  EXPECT_EQ(at<uint16_t>(i16x8_avgr_u(i16x8_splat(1), i16x8_splat(2)), 0), 2);
  EXPECT_EQ(at<uint8_t>(i8x16_popcnt(vec<uint8_t>({0xff, 0x55, 0, 0x80})), 0), 8);
  EXPECT_EQ(at<uint8_t>(i8x16_popcnt(vec<uint8_t>({0xff, 0x55, 0, 0x80})), 1), 4);
  EXPECT_EQ(at<uint8_t>(i8x16_popcnt(vec<uint8_t>({0xff, 0x55, 0, 0x80})), 3), 1);
  // simd_i16x8_q15mulr_sat_s: only -32768 * -32768 saturates
  EXPECT_EQ(at<int16_t>(i16x8_q15mulr_sat_s(i16x8_splat(0x8000), i16x8_splat(0x8000)), 0), 32767);
  EXPECT_EQ(at<int16_t>(i16x8_q15mulr_sat_s(i16x8_splat(0x4000), i16x8_splat(0x4000)), 0), 8192);
  EXPECT_EQ(at<int16_t>(i16x8_q15mulr_sat_s(i16x8_splat(0x8000), i16x8_splat(0x4000)), 0), -16384);
  EXPECT_EQ(at<int8_t>(i8x16_min_s(i8x16_splat(0x80), i8x16_splat(1)), 0), -128);
  EXPECT_EQ(at<uint8_t>(i8x16_min_u(i8x16_splat(0x80), i8x16_splat(1)), 0), 1);
  EXPECT_EQ(at<uint32_t>(i32x4_max_u(i32x4_splat(0xffffffffu), i32x4_splat(1)), 0), 0xffffffffu);
}

TEST(Simd, ComparisonsAreLaneMasks) {
  const V128 r = i8x16_lt_s(vec<int8_t>({-1, 1, 0}), vec<int8_t>({0, 0, 0}));
  EXPECT_EQ(at<uint8_t>(r, 0), 0xff);
  EXPECT_EQ(at<uint8_t>(r, 1), 0);
  EXPECT_EQ(at<uint8_t>(i8x16_lt_u(i8x16_splat(0xff), i8x16_splat(0)), 0), 0);
  EXPECT_EQ(at<uint64_t>(i64x2_ge_s(i64x2_splat(~0ull), i64x2_splat(0)), 1), 0u);
  EXPECT_EQ(at<uint64_t>(i64x2_ne(V128{1, 2}, V128{1, 3}), 0), 0u);
  EXPECT_EQ(at<uint64_t>(i64x2_ne(V128{1, 2}, V128{1, 3}), 1), ~0ull);
  // simd_f32x4_cmp: NaN is unordered; -0 equals +0.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const V128 e = f32x4_eq(f32v(nan, -0.0f, 1, 2), f32v(nan, 0.0f, 1, 3));
  EXPECT_EQ(e, vec<uint32_t>({0, ~0u, ~0u, 0}));
  EXPECT_EQ(f32x4_ne(f32v(nan, 0, 0, 0), f32v(nan, 0, 0, 0)), vec<uint32_t>({~0u, 0, 0, 0}));
  EXPECT_EQ(at<uint64_t>(f64x2_le(f64v(1, nan), f64v(1, 1)), 1), 0u);
}

TEST(Simd, ShiftsTakeTheCountModuloTheLaneWidth) {
  EXPECT_EQ(at<uint32_t>(i32x4_shl(i32x4_splat(1), 33), 0), 2u);  // simd_bit_shift: 33 is 1
  EXPECT_EQ(at<int8_t>(i8x16_shr_s(i8x16_splat(0x80), 9), 0), -64);
  EXPECT_EQ(at<uint8_t>(i8x16_shr_u(i8x16_splat(0x80), 9), 0), 0x40);
  EXPECT_EQ(at<uint64_t>(i64x2_shr_s(i64x2_splat(1ull << 63), 63), 0), ~0ull);
  EXPECT_EQ(at<uint16_t>(i16x8_shl(i16x8_splat(0x8001), 16), 0), 0x8001);
}

TEST(Simd, BitmaskAndWidening) {
  EXPECT_EQ(i8x16_bitmask(vec<int8_t>({-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -128})), 0x8001u);
  EXPECT_EQ(i64x2_bitmask(V128{1, 1ull << 63}), 2u);
  // extend_high of i8x16: lanes 8..15, sign- or zero-extended
  const V128 v = vec<int8_t>({0, 0, 0, 0, 0, 0, 0, 0, -1, 2});
  EXPECT_EQ(at<int16_t>(i16x8_extend_high_i8x16_s(v), 0), -1);
  EXPECT_EQ(at<uint16_t>(i16x8_extend_high_i8x16_u(v), 0), 255);
  EXPECT_EQ(at<int16_t>(i16x8_extend_high_i8x16_s(v), 1), 2);
  EXPECT_EQ(at<int64_t>(i64x2_extmul_low_i32x4_s(i32x4_splat(0x80000000u), i32x4_splat(0x80000000u)), 0), int64_t(1)
                                                                                                              << 62);
  EXPECT_EQ(at<uint64_t>(i64x2_extmul_high_i32x4_u(i32x4_splat(~0u), i32x4_splat(~0u)), 1), 0xfffffffe00000001ull);
  EXPECT_EQ(at<int16_t>(i16x8_extadd_pairwise_i8x16_s(i8x16_splat(0x80)), 0), -256);
  EXPECT_EQ(at<uint16_t>(i16x8_extadd_pairwise_i8x16_u(i8x16_splat(0xff)), 0), 510);
  // simd_int_to_int_extend / simd_i32x4_dot_i16x8: the one wrapping case
  EXPECT_EQ(at<uint32_t>(i32x4_dot_i16x8_s(i16x8_splat(0x8000), i16x8_splat(0x8000)), 0), 0x80000000u);
  EXPECT_EQ(at<int32_t>(i32x4_dot_i16x8_s(vec<int16_t>({1, 2}), vec<int16_t>({3, -4})), 0), -5);
}

TEST(Simd, NarrowingSaturates) {
  const V128 a = vec<int16_t>({300, -300, 127, -128, 255, 256, -1, 0});
  const V128 s = i8x16_narrow_i16x8_s(a, i16x8_splat(1));
  EXPECT_EQ(at<int8_t>(s, 0), 127);
  EXPECT_EQ(at<int8_t>(s, 1), -128);
  EXPECT_EQ(at<int8_t>(s, 3), -128);
  EXPECT_EQ(at<int8_t>(s, 8), 1);  // b's lanes come second
  const V128 u = i8x16_narrow_i16x8_u(a, i16x8_splat(0x8000));
  EXPECT_EQ(at<uint8_t>(u, 0), 255);
  EXPECT_EQ(at<uint8_t>(u, 1), 0);
  EXPECT_EQ(at<uint8_t>(u, 4), 255);
  EXPECT_EQ(at<uint8_t>(u, 6), 0);
  EXPECT_EQ(at<uint8_t>(u, 15), 0);
  EXPECT_EQ(at<uint16_t>(i16x8_narrow_i32x4_u(i32x4_splat(70000), i32x4_splat(~0u)), 0), 65535);
  EXPECT_EQ(at<uint16_t>(i16x8_narrow_i32x4_u(i32x4_splat(70000), i32x4_splat(~0u)), 4), 0);
}

TEST(Simd, FloatLanesFollowTheScalarRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // simd_f32x4: min of -0 and +0 is -0; any NaN gives the canonical NaN.
  const V128 m = f32x4_min(f32v(-0.0f, 0.0f, nan, 1), f32v(0.0f, -0.0f, 1, f32_from_bits(0x7fa00001u)));
  EXPECT_EQ(m, vec<uint32_t>({kF32SignBit, kF32SignBit, kF32CanonicalNaN, kF32CanonicalNaN}));
  EXPECT_EQ(at<uint32_t>(f32x4_max(f32v(-0.0f, 0, 0, 0), f32v(0.0f, 0, 0, 0)), 0), 0u);
  // simd_f32x4_pmin_pmax: an operand comes back as it is.
  const V128 p =
      f32x4_pmin(f32v(f32_from_bits(0x7fa00001u), 1, -0.0f, 2), f32v(1, f32_from_bits(0xffc00000u), 0.0f, 1));
  EXPECT_EQ(p, vec<uint32_t>({0x7fa00001u, f32_bits(1.0f), kF32SignBit, f32_bits(1.0f)}));
  EXPECT_EQ(at<uint32_t>(f32x4_pmax(f32v(1, 0, 0, 0), f32v(nan, 0, 0, 0)), 0), f32_bits(1.0f));
  // simd_f32x4_rounding: ties to even; -0.5 rounds to -0.
  EXPECT_EQ(f32x4_nearest(f32v(2.5f, 3.5f, -0.5f, -1.5f)), f32v(2.0f, 4.0f, -0.0f, -2.0f));
  EXPECT_EQ(f64x2_trunc(f64v(-1.9, 1.9)), f64v(-1.0, 1.0));
  EXPECT_EQ(at<uint64_t>(f64x2_sqrt(f64v(-1, 4)), 0), kF64CanonicalNaN);
  EXPECT_EQ(at<uint64_t>(f64x2_sqrt(f64v(-1, 4)), 1), f64_bits(2.0));
  EXPECT_EQ(f32x4_neg(f32v(nan, 0, 1, -1)),
            vec<uint32_t>({f32_bits(nan) ^ kF32SignBit, kF32SignBit, f32_bits(-1.0f), f32_bits(1.0f)}));
  EXPECT_EQ(at<uint32_t>(f32x4_add(f32v(3e38f, 0, 0, 0), f32v(3e38f, 0, 0, 0)), 0), f32_bits(INFINITY));
  // f32 rounding of the sum, not f64's: 1 + 2^-24 is 1 in f32
  EXPECT_EQ(at<uint32_t>(f32x4_add(f32v(1, 0, 0, 0), f32v(5.9604645e-8f, 0, 0, 0)), 0), f32_bits(1.0f));
}

TEST(Simd, Conversions) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // simd_conversions: trunc_sat saturates, NaN gives 0.
  EXPECT_EQ(i32x4_trunc_sat_f32x4_s(f32v(nan, 3e9f, -3e9f, -1.9f)), vec<uint32_t>({0, 0x7fffffffu, 0x80000000u, ~0u}));
  EXPECT_EQ(i32x4_trunc_sat_f32x4_u(f32v(nan, 5e9f, -1.5f, 3.9f)), vec<uint32_t>({0, ~0u, 0, 3}));
  EXPECT_EQ(i32x4_trunc_sat_f64x2_s_zero(f64v(-2147483649.0, 1.5)), vec<uint32_t>({0x80000000u, 1, 0, 0}));
  EXPECT_EQ(i32x4_trunc_sat_f64x2_u_zero(f64v(4294967296.0, -0.5)), vec<uint32_t>({~0u, 0, 0, 0}));
  EXPECT_EQ(f32x4_convert_i32x4_u(vec<uint32_t>({~0u, 1, 0, 16777217})),
            f32v(4294967296.0f, 1.0f, 0.0f, 16777216.0f));  // rounded to nearest even
  EXPECT_EQ(f64x2_convert_low_i32x4_s(vec<uint32_t>({~0u, 5, 7, 9})), f64v(-1.0, 5.0));
  EXPECT_EQ(f64x2_convert_low_i32x4_u(vec<uint32_t>({~0u, 5, 7, 9})), f64v(4294967295.0, 5.0));
  // demote: lanes 2 and 3 are zero; promote: the low two lanes
  EXPECT_EQ(f32x4_demote_f64x2_zero(f64v(1e300, 0.1)), vec<uint32_t>({f32_bits(INFINITY), f32_bits(0.1f), 0, 0}));
  EXPECT_EQ(f64x2_promote_low_f32x4(f32v(0.5f, -2, 7, 8)), f64v(0.5, -2.0));
  EXPECT_EQ(at<uint64_t>(f64x2_promote_low_f32x4(f32v(f32_from_bits(0x7fa00001u), 0, 0, 0)), 0), kF64CanonicalNaN);
}

TEST(Simd, LoadsMakeVectorsOfTheirBytes) {
  const uint64_t bytes = 0x80ff7f0102030405ull;
  EXPECT_EQ(v128_load8x8_s(bytes), vec<int16_t>({5, 4, 3, 2, 1, 127, -1, -128}));
  EXPECT_EQ(v128_load8x8_u(bytes), vec<uint16_t>({5, 4, 3, 2, 1, 127, 255, 128}));
  EXPECT_EQ(v128_load32x2_s(bytes), vec<int64_t>({0x02030405, int64_t(int32_t(0x80ff7f01u))}));
  EXPECT_EQ(v128_load16_splat(0xabcd), i16x8_splat(0xabcd));
  EXPECT_EQ(v128_load32_zero(0x12345678u), (V128{0x12345678u, 0}));
  EXPECT_EQ(v128_load64_zero(~0ull), (V128{~0ull, 0}));
}

}  // namespace
}  // namespace ww::sem
