#include "cli/value_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace ww::cli {
namespace {

uint64_t bits_of(std::string_view s, ValType t) {
  auto v = parse_value(s, t);
  EXPECT_TRUE(v.ok()) << s << ": " << (v.ok() ? "" : v.error().message);
  return v.ok() ? v->bits : 0xDEADBEEF;
}

TEST(ParseValue, Integers) {
  EXPECT_EQ(bits_of("0", ValType::I32), 0u);
  EXPECT_EQ(bits_of("-1", ValType::I32), 0xFFFFFFFFu);
  EXPECT_EQ(bits_of("+7", ValType::I32), 7u);
  EXPECT_EQ(bits_of("-2147483648", ValType::I32), 0x80000000u);
  EXPECT_EQ(bits_of("4294967295", ValType::I32), 0xFFFFFFFFu);
  EXPECT_EQ(bits_of("0xff", ValType::I32), 255u);
  EXPECT_EQ(bits_of("-0x10", ValType::I32), 0xFFFFFFF0u);
  EXPECT_EQ(bits_of("-9223372036854775808", ValType::I64), 0x8000000000000000ull);
  EXPECT_EQ(bits_of("18446744073709551615", ValType::I64), ~0ull);
  EXPECT_EQ(bits_of("-1", ValType::I64), ~0ull);
}

TEST(ParseValue, IntegerErrors) {
  for (const char* s : {"", "-", "abc", "1.5", "12x", "0x", " 1", "1 ", "--1", "4294967296", "-2147483649"})
    EXPECT_FALSE(parse_value(s, ValType::I32).ok()) << s;
  EXPECT_FALSE(parse_value("18446744073709551616", ValType::I64).ok());
  EXPECT_FALSE(parse_value("-9223372036854775809", ValType::I64).ok());
  auto e = parse_value("4294967296", ValType::I32);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "'4294967296' is out of range for i32");
  e = parse_value("abc", ValType::I64);
  EXPECT_EQ(e.error().message, "cannot parse 'abc' as i64");
}

TEST(ParseValue, Floats) {
  EXPECT_EQ(bits_of("1.5", ValType::F32), 0x3FC00000u);
  EXPECT_EQ(bits_of("0x1.8p3", ValType::F32), 0x41400000u);  // 12
  EXPECT_EQ(bits_of("-0x1p-1", ValType::F64), 0xBFE0000000000000ull);
  EXPECT_EQ(bits_of("-0", ValType::F32), 0x80000000u);
  EXPECT_EQ(bits_of("inf", ValType::F32), 0x7F800000u);
  EXPECT_EQ(bits_of("-inf", ValType::F64), 0xFFF0000000000000ull);
  EXPECT_EQ(bits_of("nan", ValType::F32), 0x7FC00000u);
  EXPECT_EQ(bits_of("-nan", ValType::F32), 0xFFC00000u);
  EXPECT_EQ(bits_of("nan:0x200000", ValType::F32), 0x7FA00000u);
  EXPECT_EQ(bits_of("-nan:0x1", ValType::F64), 0xFFF0000000000001ull);
  EXPECT_EQ(bits_of("1e40", ValType::F32), 0x7F800000u);  // overflow rounds to inf
  EXPECT_EQ(bits_of("1e-50", ValType::F32), 0u);          // underflow to zero
  EXPECT_EQ(bits_of("1e-45", ValType::F32), 1u);          // smallest subnormal
  EXPECT_EQ(bits_of("0.1", ValType::F64), 0x3FB999999999999Aull);
  // Decimal strings rounded directly to f32, not through f64 (double rounding).
  EXPECT_EQ(bits_of("1.00000005960464477539062500000001", ValType::F32), 0x3F800001u);
  EXPECT_EQ(bits_of("3", ValType::F32), 0x40400000u);
}

TEST(ParseValue, FloatErrors) {
  for (const char* s : {"", "x", "1.5.5", "nan:0x0", "nan:0x800000", "nan:123", "nan(1)", " 1", "1e", "0x", "1p3",
                        "--1", "infinity1", "0x1.8p3x"})
    EXPECT_FALSE(parse_value(s, ValType::F32).ok()) << s;
  EXPECT_FALSE(parse_value("nan:0x10000000000000", ValType::F64).ok());
}

TEST(ParseValue, Refs) {
  EXPECT_EQ(bits_of("null", ValType::FuncRef), 0u);
  EXPECT_EQ(bits_of("null", ValType::ExternRef), 0u);
  EXPECT_EQ(bits_of("ref.extern 5", ValType::ExternRef), 6u);
  EXPECT_EQ(bits_of("7", ValType::ExternRef), 8u);
  EXPECT_FALSE(parse_value("1", ValType::FuncRef).ok());
}

// A v128 as 0x and up to 32 hex digits (lane 0 in the low bits) or as the
// text format's shape and lanes; printed as 0x and 32 digits, which reads
// back to the same bits.
TEST(ParseValue, V128) {
  const struct {
    const char* text;
    uint64_t lo, hi;
  } cases[] = {
      {"0x0102030405060708090a0b0c0d0e0f10", 0x090a0b0c0d0e0f10ull, 0x0102030405060708ull},
      {"0x5", 5, 0},
      {"i32x4 1 -1 0x7fffffff 4294967295", 0xFFFFFFFF00000001ull, 0xFFFFFFFF7FFFFFFFull},
      {"i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 -1", 0x0706050403020100ull, 0xFF0E0D0C0B0A0908ull},
      {"f64x2 -0 nan:0x1", 0x8000000000000000ull, 0x7FF0000000000001ull},
      {"i16x8  1 2 3 4 5 6 7 8", 0x0004000300020001ull, 0x0008000700060005ull},  // spaces may repeat
  };
  for (const auto& c : cases) {
    auto v = parse_value(c.text, ValType::V128);
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.error().message;
    EXPECT_EQ(v->bits, c.lo) << c.text;
    EXPECT_EQ(v->hi, c.hi) << c.text;
  }
  for (const char* bad : {"", "0x", "0x1g", "0x123456789012345678901234567890123", "i32x4 1 2 3", "i32x4 1 2 3 4 5",
                          "i8x16 256 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", "i16x8 -32769 0 0 0 0 0 0 0", "f32x4 1 2 x 4",
                          "u32x4 1 2 3 4", "1 2 3 4"})
    EXPECT_FALSE(parse_value(bad, ValType::V128).ok()) << bad;
  const Value w{ValType::V128, 0x090a0b0c0d0e0f10ull, 0x0102030405060708ull};
  EXPECT_EQ(format_value(w), "0x0102030405060708090a0b0c0d0e0f10");
  auto back = parse_value(format_value(w), ValType::V128);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->bits, w.bits);
  EXPECT_EQ(back->hi, w.hi);
}

TEST(FormatValue, Specials) {
  EXPECT_EQ(format_value(Value::i32(-5)), "-5");
  EXPECT_EQ(format_value(Value::i64(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(format_value(Value::f32_bits(0x80000000u)), "-0");
  EXPECT_EQ(format_value(Value::f32_bits(0x7FC00000u)), "nan");
  EXPECT_EQ(format_value(Value::f32_bits(0xFFC00000u)), "-nan");
  EXPECT_EQ(format_value(Value::f32_bits(0x7FA00000u)), "nan:0x200000");
  EXPECT_EQ(format_value(Value::f64_bits(0xFFF0000000000001ull)), "-nan:0x1");
  EXPECT_EQ(format_value(Value::f64_bits(0x7FF0000000000000ull)), "inf");
  EXPECT_EQ(format_value(Value::f32_bits(0x3DCCCCCDu)), "0.1");  // shortest, not 0.100000001
  EXPECT_EQ(format_value(Value::f64_bits(0x3FB999999999999Aull)), "0.1");
  EXPECT_EQ(format_value(Value::null(ValType::FuncRef)), "null");
  EXPECT_EQ(format_value(Value{ValType::FuncRef, 3}), "ref.func");
  EXPECT_EQ(format_value(Value{ValType::ExternRef, 43}), "ref.extern 42");
}

// Every printed value must read back to the same bits.
TEST(FormatValue, RoundTripRandomBits) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    uint64_t r = rng();
    uint32_t b32 = uint32_t(r);
    std::string s32 = format_f32(b32);
    auto p32 = parse_f32_bits(s32);
    ASSERT_TRUE(p32.ok()) << s32;
    ASSERT_EQ(*p32, b32) << s32;
    std::string s64 = format_f64(r);
    auto p64 = parse_f64_bits(s64);
    ASSERT_TRUE(p64.ok()) << s64;
    ASSERT_EQ(*p64, r) << s64;
    for (ValType t : {ValType::I32, ValType::I64}) {
      Value v{t, t == ValType::I32 ? uint64_t(b32) : r};
      auto back = parse_value(format_value(v), t);
      ASSERT_TRUE(back.ok());
      ASSERT_EQ(back->bits, v.bits);
    }
  }
  // Subnormals and boundaries.
  for (uint32_t b : {0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu})
    EXPECT_EQ(*parse_f32_bits(format_f32(b)), b);
}

TEST(ParseU64, Counts) {
  EXPECT_EQ(*parse_u64("1000"), 1000u);
  EXPECT_EQ(*parse_u64("0x40"), 64u);
  EXPECT_FALSE(parse_u64("-1").ok());
  EXPECT_FALSE(parse_u64("").ok());
  EXPECT_FALSE(parse_u64("10k").ok());
}

}  // namespace
}  // namespace ww::cli
