// LEB128 rules of the binary format (maximal lengths, unused bits of the
// last byte, sign extension) and UTF-8 well-formedness.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/byte_reader.h"

namespace ww {
namespace {

using Bytes = std::vector<uint8_t>;

// Reads one value with `fn` and checks that it consumed every byte.
template <class T>
T read_all(Result<T> (ByteReader::*fn)(), const Bytes& b) {
  ByteReader r(b.data(), b.size());
  auto v = (r.*fn)();
  EXPECT_TRUE(v.ok()) << v.error().to_string();
  EXPECT_TRUE(r.at_end());
  return v.ok() ? *v : T{};
}

template <class T>
Error read_error(Result<T> (ByteReader::*fn)(), const Bytes& b, uint64_t base = 0) {
  ByteReader r(b.data(), b.size(), base);
  auto v = (r.*fn)();
  EXPECT_FALSE(v.ok());
  return v.ok() ? Error{} : v.error();
}

#define EXPECT_ERR(fn, bytes, msg, off)  \
  do {                                   \
    Error e_ = read_error(fn, bytes);    \
    EXPECT_EQ(e_.message, msg);          \
    EXPECT_EQ(e_.offset, uint64_t(off)); \
  } while (0)

TEST(Leb128, U32) {
  EXPECT_EQ(read_all(&ByteReader::u32, {0x00}), 0u);
  EXPECT_EQ(read_all(&ByteReader::u32, {0x7f}), 127u);
  EXPECT_EQ(read_all(&ByteReader::u32, {0x80, 0x01}), 128u);
  EXPECT_EQ(read_all(&ByteReader::u32, {0xff, 0xff, 0xff, 0xff, 0x0f}), 0xffffffffu);
  // Non-minimal encodings are fine up to the maximal length of 5 bytes.
  EXPECT_EQ(read_all(&ByteReader::u32, {0x82, 0x80, 0x80, 0x80, 0x00}), 2u);
  EXPECT_ERR(&ByteReader::u32, (Bytes{0x82, 0x80, 0x80, 0x80, 0x80, 0x00}), "integer representation too long", 4);
  // The fifth byte may carry only 4 payload bits.
  EXPECT_ERR(&ByteReader::u32, (Bytes{0xff, 0xff, 0xff, 0xff, 0x1f}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::u32, (Bytes{0x82, 0x80, 0x80, 0x80, 0x70}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::u32, (Bytes{0x82, 0x80, 0x80, 0x80, 0x40}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::u32, (Bytes{}), "unexpected end", 0);
  EXPECT_ERR(&ByteReader::u32, (Bytes{0x80, 0x80}), "unexpected end", 2);
}

TEST(Leb128, U64) {
  EXPECT_EQ(read_all(&ByteReader::u64, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(read_all(&ByteReader::u64, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), 0u);
  EXPECT_ERR(&ByteReader::u64, (Bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}), "integer too large",
             9);
  EXPECT_ERR(&ByteReader::u64, (Bytes{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}),
             "integer representation too long", 9);
}

TEST(Leb128, S32) {
  EXPECT_EQ(read_all(&ByteReader::s32, {0x00}), 0);
  EXPECT_EQ(read_all(&ByteReader::s32, {0x3f}), 63);
  EXPECT_EQ(read_all(&ByteReader::s32, {0x40}), -64);  // bit 6 of the last byte is the sign
  EXPECT_EQ(read_all(&ByteReader::s32, {0x7f}), -1);
  EXPECT_EQ(read_all(&ByteReader::s32, {0xc0, 0x00}), 64);
  EXPECT_EQ(read_all(&ByteReader::s32, {0xff, 0x7e}), -129);
  EXPECT_EQ(read_all(&ByteReader::s32, {0xff, 0xff, 0xff, 0xff, 0x07}), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(read_all(&ByteReader::s32, {0x80, 0x80, 0x80, 0x80, 0x78}), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(read_all(&ByteReader::s32, {0xff, 0xff, 0xff, 0xff, 0x7f}), -1);  // non-minimal -1
  EXPECT_EQ(read_all(&ByteReader::s32, {0x80, 0x80, 0x80, 0x80, 0x00}), 0);   // non-minimal 0
  // In the fifth byte the 3 unused bits must equal the sign bit.
  EXPECT_ERR(&ByteReader::s32, (Bytes{0xff, 0xff, 0xff, 0xff, 0x0f}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::s32, (Bytes{0x80, 0x80, 0x80, 0x80, 0x70}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::s32, (Bytes{0x80, 0x80, 0x80, 0x80, 0x08}), "integer too large", 4);  // 2^31
  EXPECT_ERR(&ByteReader::s32, (Bytes{0xff, 0xff, 0xff, 0xff, 0x4f}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::s32, (Bytes{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), "integer representation too long", 4);
  EXPECT_ERR(&ByteReader::s32, (Bytes{0xff}), "unexpected end", 1);
}

TEST(Leb128, S33) {
  EXPECT_EQ(read_all(&ByteReader::s33, {0x40}), -64);
  EXPECT_EQ(read_all(&ByteReader::s33, {0xff, 0xff, 0xff, 0xff, 0x0f}), int64_t{0xffffffff});
  EXPECT_EQ(read_all(&ByteReader::s33, {0x80, 0x80, 0x80, 0x80, 0x70}), -(int64_t{1} << 32));
  EXPECT_EQ(read_all(&ByteReader::s33, {0xff, 0xff, 0xff, 0xff, 0x7f}), -1);
  // Only 2 unused bits in the fifth byte (33 = 4 * 7 + 5).
  EXPECT_ERR(&ByteReader::s33, (Bytes{0x80, 0x80, 0x80, 0x80, 0x10}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::s33, (Bytes{0xff, 0xff, 0xff, 0xff, 0x6f}), "integer too large", 4);
  EXPECT_ERR(&ByteReader::s33, (Bytes{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), "integer representation too long", 4);
}

TEST(Leb128, S64) {
  EXPECT_EQ(read_all(&ByteReader::s64, {0x7f}), -1);
  EXPECT_EQ(read_all(&ByteReader::s64, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(read_all(&ByteReader::s64, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(read_all(&ByteReader::s64, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}), -1);
  // The tenth byte carries one payload bit: the rest must repeat it.
  EXPECT_ERR(&ByteReader::s64, (Bytes{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}), "integer too large",
             9);
  EXPECT_ERR(&ByteReader::s64, (Bytes{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7e}), "integer too large",
             9);
  EXPECT_ERR(&ByteReader::s64, (Bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x41}), "integer too large",
             9);
  EXPECT_ERR(&ByteReader::s64, (Bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}),
             "integer representation too long", 9);
}

TEST(ByteReader, OffsetsIncludeBase) {
  Bytes b = {0x80, 0x80};
  Error e = read_error(&ByteReader::u32, b, 1000);
  EXPECT_EQ(e.message, "unexpected end");
  EXPECT_EQ(e.offset, 1002u);
  EXPECT_EQ(e.to_string(), "unexpected end (at byte 0x3ea)");
}

TEST(ByteReader, FixedWidthAndSub) {
  Bytes b = {0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0x80, 0x3f, 0xaa, 0xbb};
  ByteReader r(b.data(), b.size(), 10);
  EXPECT_EQ(*r.fixed_u32(), 0x12345678u);
  EXPECT_EQ(*r.f32(), 1.0f);
  EXPECT_EQ(r.offset(), 18u);
  auto sub = r.sub(3);
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.error().offset, 18u);
  auto sub2 = r.sub(2);
  ASSERT_TRUE(sub2.ok());
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(sub2->offset(), 18u);
  EXPECT_EQ(*sub2->u8(), 0xaa);
  EXPECT_FALSE(sub2->fixed_u32().ok());
}

TEST(ByteReader, Names) {
  Bytes ok = {0x03, 'a', 'b', 'c'};
  ByteReader r(ok.data(), ok.size());
  EXPECT_EQ(*r.name(), "abc");
  Bytes long_name = {0x05, 'a', 'b'};
  ByteReader r2(long_name.data(), long_name.size());
  EXPECT_EQ(r2.name().error().message, "length out of bounds");
  Bytes bad = {0x02, 0xc0, 0x80};
  ByteReader r3(bad.data(), bad.size());
  auto n = r3.name();
  EXPECT_EQ(n.error().message, "malformed UTF-8 encoding");
  EXPECT_EQ(n.error().offset, 1u);
}

bool utf8(const Bytes& b) { return is_valid_utf8(b.data(), b.size()); }

TEST(Utf8, WellFormed) {
  EXPECT_TRUE(utf8({}));
  EXPECT_TRUE(utf8({'a', 0x00, 0x7f}));
  EXPECT_TRUE(utf8({0xc2, 0x80}));              // U+0080
  EXPECT_TRUE(utf8({0xc3, 0xa9}));              // é
  EXPECT_TRUE(utf8({0xe2, 0x82, 0xac}));        // €
  EXPECT_TRUE(utf8({0xed, 0x9f, 0xbf}));        // U+D7FF, just below the surrogates
  EXPECT_TRUE(utf8({0xee, 0x80, 0x80}));        // U+E000, just above them
  EXPECT_TRUE(utf8({0xef, 0xbf, 0xbf}));        // U+FFFF
  EXPECT_TRUE(utf8({0xf0, 0x9d, 0x84, 0x9e}));  // 𝄞
  EXPECT_TRUE(utf8({0xf4, 0x8f, 0xbf, 0xbf}));  // U+10FFFF
}

TEST(Utf8, Malformed) {
  EXPECT_FALSE(utf8({0x80}));  // lone continuation byte
  EXPECT_FALSE(utf8({0xbf}));
  EXPECT_FALSE(utf8({0xc0, 0x80}));              // overlong U+0000
  EXPECT_FALSE(utf8({0xc1, 0xbf}));              // overlong U+007F
  EXPECT_FALSE(utf8({0xe0, 0x80, 0x80}));        // overlong 3-byte
  EXPECT_FALSE(utf8({0xe0, 0x9f, 0xbf}));        // overlong U+07FF
  EXPECT_FALSE(utf8({0xf0, 0x80, 0x80, 0x80}));  // overlong 4-byte
  EXPECT_FALSE(utf8({0xf0, 0x8f, 0xbf, 0xbf}));  // overlong U+FFFF
  EXPECT_FALSE(utf8({0xed, 0xa0, 0x80}));        // U+D800 surrogate
  EXPECT_FALSE(utf8({0xed, 0xbf, 0xbf}));        // U+DFFF surrogate
  EXPECT_FALSE(utf8({0xf4, 0x90, 0x80, 0x80}));  // U+110000
  EXPECT_FALSE(utf8({0xf5, 0x80, 0x80, 0x80}));
  EXPECT_FALSE(utf8({0xf8, 0x88, 0x80, 0x80, 0x80}));  // 5-byte form
  EXPECT_FALSE(utf8({0xfe}));
  EXPECT_FALSE(utf8({0xff}));
  EXPECT_FALSE(utf8({0xc3}));  // truncated
  EXPECT_FALSE(utf8({0xe2, 0x82}));
  EXPECT_FALSE(utf8({0xf0, 0x9d, 0x84}));
  EXPECT_FALSE(utf8({0xc3, 0x41}));  // continuation byte missing
  EXPECT_FALSE(utf8({0xe2, 0x82, 0xc0}));
}

}  // namespace
}  // namespace ww
