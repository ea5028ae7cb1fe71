// Expected values come from the spec's .wast files (cited) or from working
// the IEEE-754 / two's-complement arithmetic by hand, never from the code
// under test.
#include "semantics/semantics.h"

#include <gtest/gtest.h>

#include <limits>
#include <type_traits>

namespace ww::sem {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();

bool is_nan32(float f) { return (f32_bits(f) & 0x7f800000u) == 0x7f800000u && (f32_bits(f) & 0x7fffffu); }
bool is_nan64(double d) {
  return (f64_bits(d) & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (f64_bits(d) & 0xfffffffffffffull);
}
// Arithmetic NaNs have the quiet bit set; canonical ones only that bit.
bool is_arith_nan32(float f) { return is_nan32(f) && (f32_bits(f) & 0x00400000u); }
bool is_arith_nan64(double d) { return is_nan64(d) && (f64_bits(d) & 0x0008000000000000ull); }

TEST(Bits, RoundTrip) {
  EXPECT_EQ(f32_bits(1.0f), 0x3f800000u);
  EXPECT_EQ(f64_bits(-2.0), 0xc000000000000000ull);
  EXPECT_EQ(f32_bits(f32_from_bits(0x7fa00001u)), 0x7fa00001u);  // signalling NaN survives
  EXPECT_EQ(f64_bits(f64_from_bits(0xfff0000000000001ull)), 0xfff0000000000001ull);
}

TEST(FloatBitOps, AbsNegCopysignKeepNaNPayload) {
  EXPECT_EQ(f32_bits(f32_abs(f32_from_bits(0xffa00001u))), 0x7fa00001u);
  EXPECT_EQ(f32_bits(f32_neg(f32_from_bits(0x7fa00001u))), 0xffa00001u);
  EXPECT_EQ(f32_bits(f32_neg(f32_from_bits(0xffc00000u))), 0x7fc00000u);
  EXPECT_EQ(f32_bits(f32_copysign(f32_from_bits(0x7fc00123u), -1.0f)), 0xffc00123u);
  EXPECT_EQ(f32_bits(f32_copysign(2.0f, f32_from_bits(0xffc00000u))), f32_bits(-2.0f));
  EXPECT_EQ(f64_bits(f64_abs(f64_from_bits(0xfff4000000000001ull))), 0x7ff4000000000001ull);
  EXPECT_EQ(f64_bits(f64_neg(f64_from_bits(0x7ff4000000000001ull))), 0xfff4000000000001ull);
  EXPECT_EQ(f64_bits(f64_copysign(f64_from_bits(0x7ff8000000000abcull), -0.0)), 0xfff8000000000abcull);
  EXPECT_EQ(f32_bits(f32_neg(0.0f)), 0x80000000u);
  EXPECT_EQ(f64_bits(f64_abs(-0.0)), 0u);
}

TEST(FloatArith, NaNResultsAreArithmeticNaNs) {
  const float snan = f32_from_bits(0x7fa00000u);
  EXPECT_TRUE(is_arith_nan32(f32_add(snan, 1.0f)));
  EXPECT_TRUE(is_arith_nan32(f32_sub(kInfF, kInfF)));
  EXPECT_TRUE(is_arith_nan32(f32_mul(0.0f, kInfF)));
  EXPECT_TRUE(is_arith_nan32(f32_div(0.0f, 0.0f)));
  EXPECT_TRUE(is_arith_nan32(f32_sqrt(-1.0f)));
  EXPECT_TRUE(is_arith_nan32(f32_nearest(snan)));
  EXPECT_TRUE(is_arith_nan32(f32_ceil(snan)));
  EXPECT_TRUE(is_arith_nan32(f32_demote_f64(f64_from_bits(0x7ff0000000000001ull))));
  EXPECT_TRUE(is_arith_nan64(f64_promote_f32(snan)));
  EXPECT_TRUE(is_arith_nan64(f64_add(f64_from_bits(0x7ff0000000000001ull), 1.0)));
  EXPECT_TRUE(is_arith_nan64(f64_sqrt(-2.0)));
  EXPECT_TRUE(is_arith_nan64(f64_floor(f64_from_bits(0xfff0000000000001ull))));
  // A canonical NaN input must give a canonical NaN (payload = quiet bit only).
  const float cnan = f32_from_bits(0x7fc00000u);
  EXPECT_EQ(f32_bits(f32_add(cnan, 1.0f)) & 0x7fffffffu, 0x7fc00000u);
  const double cnand = f64_from_bits(0xfff8000000000000ull);
  EXPECT_EQ(f64_bits(f64_mul(cnand, 2.0)) & 0x7fffffffffffffffull, 0x7ff8000000000000ull);
}

TEST(FloatArith, Exact) {
  EXPECT_EQ(f32_add(0x1p-149f, 0x1p-149f), 0x1p-148f);
  EXPECT_EQ(f64_sub(1.0, 0x1p-53), 0x1.fffffffffffffp-1);
  EXPECT_EQ(f32_sqrt(2.0f), 0x1.6a09e6p+0f);
  EXPECT_EQ(f64_sqrt(2.0), 0x1.6a09e667f3bcdp+0);
  EXPECT_EQ(f32_div(1.0f, 3.0f), 0x1.555556p-2f);
  EXPECT_EQ(f32_bits(f32_ceil(-0.5f)), 0x80000000u);  // ceil keeps the sign of zero
  EXPECT_EQ(f32_floor(-0.5f), -1.0f);
  EXPECT_EQ(f64_bits(f64_trunc(-0.9)), 0x8000000000000000ull);
  EXPECT_EQ(f64_ceil(0x1.fffffffffffffp+51), 0x1p+52);
}

TEST(FloatArith, MinMaxNaNAndSignedZero) {
  EXPECT_EQ(f32_bits(f32_min(-0.0f, 0.0f)), 0x80000000u);
  EXPECT_EQ(f32_bits(f32_min(0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(f32_bits(f32_max(-0.0f, 0.0f)), 0u);
  EXPECT_EQ(f32_bits(f32_max(0.0f, -0.0f)), 0u);
  EXPECT_EQ(f64_bits(f64_min(0.0, -0.0)), 0x8000000000000000ull);
  EXPECT_EQ(f64_bits(f64_max(-0.0, 0.0)), 0u);
  const float nan = f32_from_bits(0x7fc00000u);
  EXPECT_TRUE(is_arith_nan32(f32_min(nan, 1.0f)));
  EXPECT_TRUE(is_arith_nan32(f32_min(1.0f, nan)));
  EXPECT_TRUE(is_arith_nan32(f32_max(-kInfF, nan)));
  EXPECT_TRUE(is_arith_nan32(f32_max(f32_from_bits(0x7fa00000u), kInfF)));
  EXPECT_TRUE(is_arith_nan64(f64_min(f64_from_bits(0x7ff0000000000001ull), -kInfD)));
  EXPECT_TRUE(is_arith_nan64(f64_max(0.0, f64_from_bits(0xfff8000000000000ull))));
  EXPECT_EQ(f32_min(1.0f, 2.0f), 1.0f);
  EXPECT_EQ(f32_max(1.0f, 2.0f), 2.0f);
  EXPECT_EQ(f64_min(-kInfD, kInfD), -kInfD);
  EXPECT_EQ(f64_max(-kInfD, kInfD), kInfD);
  EXPECT_EQ(f32_min(-3.5f, -3.25f), -3.5f);
}

TEST(FloatArith, NearestRoundsHalfToEven) {
  EXPECT_EQ(f32_nearest(0.5f), 0.0f);
  EXPECT_EQ(f32_nearest(1.5f), 2.0f);
  EXPECT_EQ(f32_nearest(2.5f), 2.0f);
  EXPECT_EQ(f32_nearest(-1.5f), -2.0f);
  EXPECT_EQ(f32_bits(f32_nearest(-0.5f)), 0x80000000u);  // f32.wast: nearest -0.5 = -0
  EXPECT_EQ(f32_nearest(4194303.5f), 4194304.0f);        // largest f32 with a .5
  EXPECT_EQ(f32_nearest(8388609.0f), 8388609.0f);
  EXPECT_EQ(f64_nearest(4503599627370495.5), 4503599627370496.0);
  EXPECT_EQ(f64_nearest(-3.5), -4.0);
  EXPECT_EQ(f64_nearest(kInfD), kInfD);
}

TEST(Integer, DivRemTraps) {
  uint32_t r = 12345;
  EXPECT_EQ(i32_div_s(0x80000000u, 0xffffffffu, &r), TrapCode::IntegerOverflow);
  EXPECT_EQ(r, 12345u);  // nothing written on a trap
  EXPECT_EQ(i32_div_s(1, 0, &r), TrapCode::IntegerDivideByZero);
  EXPECT_EQ(i32_div_u(1, 0, &r), TrapCode::IntegerDivideByZero);
  EXPECT_EQ(i32_rem_s(1, 0, &r), TrapCode::IntegerDivideByZero);
  EXPECT_EQ(i32_rem_u(1, 0, &r), TrapCode::IntegerDivideByZero);
  ASSERT_EQ(i32_rem_s(0x80000000u, 0xffffffffu, &r), TrapCode::None);
  EXPECT_EQ(r, 0u);
  ASSERT_EQ(i32_div_s(uint32_t(-7), 2, &r), TrapCode::None);
  EXPECT_EQ(r, uint32_t(-3));  // truncates toward zero
  ASSERT_EQ(i32_rem_s(uint32_t(-7), 2, &r), TrapCode::None);
  EXPECT_EQ(r, uint32_t(-1));  // sign of the dividend
  ASSERT_EQ(i32_div_u(0xfffffff9u, 2, &r), TrapCode::None);
  EXPECT_EQ(r, 0x7ffffffcu);
  ASSERT_EQ(i32_rem_u(0xfffffff9u, 2, &r), TrapCode::None);
  EXPECT_EQ(r, 1u);

  uint64_t q = 7;
  EXPECT_EQ(i64_div_s(0x8000000000000000ull, ~0ull, &q), TrapCode::IntegerOverflow);
  EXPECT_EQ(i64_div_u(5, 0, &q), TrapCode::IntegerDivideByZero);
  ASSERT_EQ(i64_rem_s(0x8000000000000000ull, ~0ull, &q), TrapCode::None);
  EXPECT_EQ(q, 0u);
  ASSERT_EQ(i64_div_s(uint64_t(-11), 3, &q), TrapCode::None);
  EXPECT_EQ(q, uint64_t(-3));
  ASSERT_EQ(i64_div_u(0x8000000000000001ull, 2, &q), TrapCode::None);
  EXPECT_EQ(q, 0x4000000000000000ull);
  ASSERT_EQ(i64_rem_u(~0ull, 10, &q), TrapCode::None);
  EXPECT_EQ(q, 5u);  // 18446744073709551615 mod 10
}

TEST(Integer, ShiftsMaskTheCount) {
  EXPECT_EQ(i32_shl(1, 33), 2u);
  EXPECT_EQ(i32_shl(1, 32), 1u);
  EXPECT_EQ(i32_shr_s(0x80000000u, 63), 0xffffffffu);
  EXPECT_EQ(i32_shr_u(0x80000000u, 63), 1u);
  EXPECT_EQ(i32_shr_s(0x40000000u, 0xffffffffu), 0u);
  EXPECT_EQ(i64_shl(1, 65), 2u);
  EXPECT_EQ(i64_shl(1, 64), 1u);
  EXPECT_EQ(i64_shr_s(0x8000000000000000ull, 127), ~0ull);
  EXPECT_EQ(i64_shr_u(0x8000000000000000ull, 127), 1u);
}

TEST(Integer, Rotations) {
  EXPECT_EQ(i32_rotl(0xfe00dc00u, 4), 0xe00dc00fu);  // i32.wast
  EXPECT_EQ(i32_rotr(0xb0c1d2e3u, 5), 0x1d860e97u);  // i32.wast
  EXPECT_EQ(i32_rotl(1, 32), 1u);
  EXPECT_EQ(i32_rotr(1, 0), 1u);
  EXPECT_EQ(i32_rotr(1, 1), 0x80000000u);
  EXPECT_EQ(i32_rotl(0x80000000u, 33), 1u);
  EXPECT_EQ(i64_rotl(0xabcd987602468aceull, 1), 0x579b30ec048d159dull);  // i64.wast
  EXPECT_EQ(i64_rotr(1, 1), 0x8000000000000000ull);
  EXPECT_EQ(i64_rotl(1, 64), 1u);
  EXPECT_EQ(i64_rotr(0xabd1234ef567809cull, 63), 0x57a2469deacf0139ull);  // i64.wast
  EXPECT_EQ(i64_rotr(0xabd1234ef567809cull, 0x800000000000003full), 0x57a2469deacf0139ull);
}

TEST(Integer, BitCounts) {
  EXPECT_EQ(i32_clz(0), 32u);
  EXPECT_EQ(i32_ctz(0), 32u);
  EXPECT_EQ(i32_clz(1), 31u);
  EXPECT_EQ(i32_ctz(0x80000000u), 31u);
  EXPECT_EQ(i32_popcnt(0xffffffffu), 32u);
  EXPECT_EQ(i32_popcnt(0x55555555u), 16u);
  EXPECT_EQ(i64_clz(0), 64u);
  EXPECT_EQ(i64_ctz(0), 64u);
  EXPECT_EQ(i64_clz(0x00008000ull), 48u);
  EXPECT_EQ(i64_ctz(0x0000000100000000ull), 32u);
  EXPECT_EQ(i64_popcnt(0xdeadbeefdeadbeefull), 48u);
}

TEST(Integer, Comparisons) {
  EXPECT_EQ(i32_lt_s(0x80000000u, 0), 1u);
  EXPECT_EQ(i32_lt_u(0x80000000u, 0), 0u);
  EXPECT_EQ(i64_ge_s(~0ull, 0), 0u);
  EXPECT_EQ(i64_ge_u(~0ull, 0), 1u);
  EXPECT_EQ(i32_eqz(0), 1u);
  EXPECT_EQ(i64_eqz(0x100000000ull), 0u);
  EXPECT_EQ(i32_add(0xffffffffu, 2), 1u);
  EXPECT_EQ(i64_mul(0x100000001ull, 0x100000001ull), 0x200000001ull);
}

TEST(Conversions, SignExtension) {
  EXPECT_EQ(i32_extend8_s(0x80), 0xffffff80u);
  EXPECT_EQ(i32_extend8_s(0x7f), 0x7fu);
  EXPECT_EQ(i32_extend8_s(0x12345680u), 0xffffff80u);
  EXPECT_EQ(i32_extend16_s(0x8000), 0xffff8000u);
  EXPECT_EQ(i32_extend16_s(0xabcd7fffu), 0x7fffu);
  EXPECT_EQ(i64_extend8_s(0x01234567890abcffull), ~0ull);
  EXPECT_EQ(i64_extend16_s(0x8000), 0xffffffffffff8000ull);
  EXPECT_EQ(i64_extend32_s(0x80000000ull), 0xffffffff80000000ull);
  EXPECT_EQ(i64_extend32_s(0xffffffff7fffffffull), 0x7fffffffull);
  EXPECT_EQ(i64_extend_i32_s(0xffffffffu), ~0ull);
  EXPECT_EQ(i64_extend_i32_u(0xffffffffu), 0xffffffffull);
  EXPECT_EQ(i32_wrap_i64(0x123456789abcdef0ull), 0x9abcdef0u);
}

template <typename F, typename T>
void expect_trunc(TrapCode (*fn)(F, T*), F in, std::type_identity_t<T> want) {
  T out = 0;
  ASSERT_EQ(fn(in, &out), TrapCode::None) << in;
  EXPECT_EQ(out, want) << in;
}
template <typename F, typename T>
void expect_trunc_trap(TrapCode (*fn)(F, T*), F in, TrapCode want) {
  T out = 0;
  EXPECT_EQ(fn(in, &out), want) << in;
}

TEST(Conversions, TruncationBoundaries) {
  const auto ovf = TrapCode::IntegerOverflow;
  const auto inv = TrapCode::InvalidConversionToInteger;
  const float nanf = f32_from_bits(0x7fc00000u);
  const double nand = f64_from_bits(0x7ff8000000000000ull);

  expect_trunc(i32_trunc_f32_s, -2147483648.0f, 0x80000000u);
  expect_trunc(i32_trunc_f32_s, 2147483520.0f, 2147483520u);  // largest f32 below 2^31
  expect_trunc(i32_trunc_f32_s, -1.9f, uint32_t(-1));
  expect_trunc_trap(i32_trunc_f32_s, 2147483648.0f, ovf);
  expect_trunc_trap(i32_trunc_f32_s, -2147483904.0f, ovf);  // next f32 below -2^31
  expect_trunc_trap(i32_trunc_f32_s, nanf, inv);
  expect_trunc_trap(i32_trunc_f32_s, -kInfF, ovf);

  expect_trunc(i32_trunc_f32_u, -0.9f, 0u);
  expect_trunc(i32_trunc_f32_u, 4294967040.0f, 4294967040u);
  expect_trunc_trap(i32_trunc_f32_u, -1.0f, ovf);
  expect_trunc_trap(i32_trunc_f32_u, 4294967296.0f, ovf);
  expect_trunc_trap(i32_trunc_f32_u, f32_from_bits(0xffc00000u), inv);

  expect_trunc(i32_trunc_f64_s, -2147483648.9, 0x80000000u);
  expect_trunc(i32_trunc_f64_s, 2147483647.9, 0x7fffffffu);
  expect_trunc_trap(i32_trunc_f64_s, -2147483649.0, ovf);
  expect_trunc_trap(i32_trunc_f64_s, 2147483648.0, ovf);
  expect_trunc_trap(i32_trunc_f64_s, nand, inv);

  expect_trunc(i32_trunc_f64_u, 4294967295.9, 0xffffffffu);
  expect_trunc(i32_trunc_f64_u, -0.9999999, 0u);
  expect_trunc_trap(i32_trunc_f64_u, 4294967296.0, ovf);
  expect_trunc_trap(i32_trunc_f64_u, -1.0, ovf);
  expect_trunc_trap(i32_trunc_f64_u, kInfD, ovf);

  expect_trunc(i64_trunc_f32_s, -9223372036854775808.0f, 0x8000000000000000ull);
  expect_trunc(i64_trunc_f32_s, 9223371487098961920.0f, 0x7fffff8000000000ull);
  expect_trunc_trap(i64_trunc_f32_s, 9223372036854775808.0f, ovf);
  expect_trunc_trap(i64_trunc_f32_s, -9223373136366403584.0f, ovf);
  expect_trunc_trap(i64_trunc_f32_s, nanf, inv);

  expect_trunc(i64_trunc_f32_u, 18446742974197923840.0f, 0xffffff0000000000ull);
  expect_trunc(i64_trunc_f32_u, -0.9f, 0ull);
  expect_trunc_trap(i64_trunc_f32_u, 18446744073709551616.0f, ovf);
  expect_trunc_trap(i64_trunc_f32_u, -1.0f, ovf);

  expect_trunc(i64_trunc_f64_s, 9223372036854774784.0, 0x7ffffffffffffc00ull);
  expect_trunc(i64_trunc_f64_s, -9223372036854775808.0, 0x8000000000000000ull);
  expect_trunc_trap(i64_trunc_f64_s, 9223372036854775808.0, ovf);
  expect_trunc_trap(i64_trunc_f64_s, -9223372036854777856.0, ovf);
  expect_trunc_trap(i64_trunc_f64_s, f64_from_bits(0x7ff0000000000001ull), inv);

  expect_trunc(i64_trunc_f64_u, 18446744073709549568.0, 0xfffffffffffff800ull);
  expect_trunc(i64_trunc_f64_u, -0.5, 0ull);
  expect_trunc_trap(i64_trunc_f64_u, 18446744073709551616.0, ovf);
  expect_trunc_trap(i64_trunc_f64_u, -1.0, ovf);
  expect_trunc_trap(i64_trunc_f64_u, nand, inv);
}

TEST(Conversions, SaturatingTruncation) {
  const float nanf = f32_from_bits(0x7fc00000u);
  const double nand = f64_from_bits(0xfff8000000000000ull);
  EXPECT_EQ(i32_trunc_sat_f32_s(nanf), 0u);
  EXPECT_EQ(i32_trunc_sat_f32_s(kInfF), 0x7fffffffu);
  EXPECT_EQ(i32_trunc_sat_f32_s(-kInfF), 0x80000000u);
  EXPECT_EQ(i32_trunc_sat_f32_s(2147483648.0f), 0x7fffffffu);
  EXPECT_EQ(i32_trunc_sat_f32_s(-2147483648.0f), 0x80000000u);
  EXPECT_EQ(i32_trunc_sat_f32_s(-1.5f), uint32_t(-1));
  EXPECT_EQ(i32_trunc_sat_f32_u(-1.0f), 0u);
  EXPECT_EQ(i32_trunc_sat_f32_u(4294967296.0f), 0xffffffffu);
  EXPECT_EQ(i32_trunc_sat_f32_u(4294967040.0f), 4294967040u);
  EXPECT_EQ(i32_trunc_sat_f64_s(-2147483649.0), 0x80000000u);
  EXPECT_EQ(i32_trunc_sat_f64_s(2147483647.5), 0x7fffffffu);
  EXPECT_EQ(i32_trunc_sat_f64_s(nand), 0u);
  EXPECT_EQ(i32_trunc_sat_f64_u(1e100), 0xffffffffu);
  EXPECT_EQ(i32_trunc_sat_f64_u(-1e100), 0u);
  EXPECT_EQ(i64_trunc_sat_f32_s(9223372036854775808.0f), 0x7fffffffffffffffull);
  EXPECT_EQ(i64_trunc_sat_f32_s(-kInfF), 0x8000000000000000ull);
  EXPECT_EQ(i64_trunc_sat_f32_u(kInfF), ~0ull);
  EXPECT_EQ(i64_trunc_sat_f32_u(nanf), 0ull);
  EXPECT_EQ(i64_trunc_sat_f64_s(-9223372036854777856.0), 0x8000000000000000ull);
  EXPECT_EQ(i64_trunc_sat_f64_s(9223372036854774784.0), 0x7ffffffffffffc00ull);
  EXPECT_EQ(i64_trunc_sat_f64_u(18446744073709551616.0), ~0ull);
  EXPECT_EQ(i64_trunc_sat_f64_u(18446744073709549568.0), 0xfffffffffffff800ull);
  EXPECT_EQ(i64_trunc_sat_f64_u(-0.9), 0ull);
}

TEST(Conversions, IntToFloatRoundsOnce) {
  // conversions.wast: these catch double rounding through f64.
  EXPECT_EQ(f32_convert_i64_u(0x0020000020000001ull), 0x1.000002p+53f);
  EXPECT_EQ(f32_convert_i64_u(0x7fffffbfffffffffull), 0x1.fffffep+62f);
  EXPECT_EQ(f32_convert_i64_u(0x8000008000000001ull), 0x1.000002p+63f);
  EXPECT_EQ(f32_convert_i64_u(0xfffffe8000000001ull), 0x1.fffffep+63f);
  EXPECT_EQ(f32_convert_i64_u(~0ull), 18446744073709551616.0f);
  EXPECT_EQ(f32_convert_i64_u(16777219), 16777220.0f);
  EXPECT_EQ(f32_convert_i64_s(0x7fffff4000000001ull), 0x1.fffffep+62f);
  EXPECT_EQ(f32_convert_i64_s(0x8000004000000001ull), -0x1.fffffep+62f);
  EXPECT_EQ(f32_convert_i64_s(0xffdfffffdfffffffull), -0x1.000002p+53f);
  EXPECT_EQ(f32_convert_i32_s(0x80000000u), -2147483648.0f);
  EXPECT_EQ(f32_convert_i32_u(0xffffffffu), 4294967296.0f);
  EXPECT_EQ(f32_convert_i32_u(0x80000081u), 2147483904.0f);  // above the tie: rounds up
  EXPECT_EQ(f32_convert_i32_s(16777217), 16777216.0f);       // tie to even
  EXPECT_EQ(f64_convert_i64_u(0x8000000000000401ull), 0x1.0000000000001p+63);
  EXPECT_EQ(f64_convert_i64_u(0xfffffffffffff401ull), 0x1.fffffffffffffp+63);
  EXPECT_EQ(f64_convert_i64_s(9007199254740993ll), 9007199254740992.0);
  EXPECT_EQ(f64_convert_i64_s(uint64_t(-9007199254740995ll)), -9007199254740996.0);
  EXPECT_EQ(f64_convert_i32_u(0xffffffffu), 4294967295.0);
  EXPECT_EQ(f64_convert_i32_s(0xffffffffu), -1.0);
}

TEST(Conversions, DemotePromote) {
  EXPECT_EQ(f32_demote_f64(0x1.000001p+0), 1.0f);                   // tie to even
  EXPECT_EQ(f32_demote_f64(0x1.0000010000001p+0), 0x1.000002p+0f);  // above the tie
  EXPECT_EQ(f32_demote_f64(0x1.fffffffp+127), kInfF);               // past max + half ulp
  EXPECT_EQ(f32_demote_f64(0x1.fffffefffffffp+127), 0x1.fffffep+127f);
  EXPECT_EQ(f32_demote_f64(0x1p-150), 0.0f);  // tie to even (0)
  EXPECT_EQ(f32_demote_f64(0x1.0000000000001p-150), 0x1p-149f);
  EXPECT_EQ(f64_promote_f32(0x1p-149f), 0x1p-149);
  EXPECT_EQ(f64_bits(f64_promote_f32(-0.0f)), 0x8000000000000000ull);
}

TEST(Conversions, Reinterpret) {
  EXPECT_EQ(i32_reinterpret_f32(f32_from_bits(0x7fa00001u)), 0x7fa00001u);
  EXPECT_EQ(f64_bits(f64_reinterpret_i64(0xfff0000000000123ull)), 0xfff0000000000123ull);
  EXPECT_EQ(i64_reinterpret_f64(-1.0), 0xbff0000000000000ull);
  EXPECT_EQ(f32_reinterpret_i32(0x40490fdbu), 0x1.921fb6p+1f);
}

TEST(Memory, BoundsAndByteOrder) {
  EXPECT_FALSE(mem_oob(0, 0, 4, 4));
  EXPECT_TRUE(mem_oob(1, 0, 4, 4));
  EXPECT_TRUE(mem_oob(0, 1, 4, 4));
  EXPECT_FALSE(mem_oob(65532, 0, 4, 65536));
  EXPECT_TRUE(mem_oob(65533, 0, 4, 65536));
  EXPECT_TRUE(mem_oob(0xffffffffull, 0xffffffffull, 8, 65536));  // no 32-bit wrap
  EXPECT_TRUE(mem_oob(0, 0, 1, 0));

  uint8_t buf[9] = {};
  store32(buf + 1, 0x11223344u);  // unaligned on purpose
  EXPECT_EQ(buf[1], 0x44);
  EXPECT_EQ(buf[4], 0x11);
  EXPECT_EQ(load16(buf + 2), 0x2233u);
  store64(buf + 1, 0x0102030405060708ull);
  EXPECT_EQ(buf[1], 0x08);
  EXPECT_EQ(buf[8], 0x01);
  EXPECT_EQ(load64(buf + 1), 0x0102030405060708ull);
  store16(buf, 0xbeef);
  EXPECT_EQ(buf[0], 0xef);
  EXPECT_EQ(load32(buf), 0x0607beefu);
  store8(buf, 0x7f);
  EXPECT_EQ(load8(buf), 0x7f);
}

}  // namespace
}  // namespace ww::sem
