// Malformed binaries: each case asserts the spec tests' message and the byte
// offset the error points at. Byte positions in comments are module offsets
// (the 8-byte header occupies 0..7).
#include <gtest/gtest.h>

#include "decode_test_util.h"

namespace ww::test {
namespace {

const Bytes kType0 = section(1, {0x01, 0x60, 0x00, 0x00});  // (type (func)), bytes 8..13

TEST(DecodeMalformed, Header) {
  EXPECT_DECODE_ERROR(Bytes{}, "unexpected end", 0);
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73}), "unexpected end", 0);
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d}), "unexpected end", 4);
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00}), "unexpected end", 4);
  EXPECT_DECODE_ERROR((Bytes{'a', 's', 'm', 0x00, 0x01, 0x00, 0x00, 0x00}), "magic header not detected", 0);
  EXPECT_DECODE_ERROR((Bytes{0x00, 'A', 'S', 'M', 0x01, 0x00, 0x00, 0x00}), "magic header not detected", 0);
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00}), "unknown binary version", 4);
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d, 0x00, 0x00, 0x00, 0x01}), "unknown binary version", 4);
}

TEST(DecodeMalformed, SectionIdAndSize) {
  EXPECT_DECODE_ERROR(wasm({{0x0d, 0x00}}), "malformed section id", 8);
  EXPECT_DECODE_ERROR(wasm({{0x80, 0x00, 0x01, 0x00}}), "malformed section id", 8);
  // section id with no size after it
  EXPECT_DECODE_ERROR(wasm({{0x01}}), "unexpected end", 9);
  // type section: 1 type declared, 2 given; contents start at 10
  EXPECT_DECODE_ERROR(wasm({{0x01, 0x07, 0x01, 0x60, 0x00, 0x00, 0x60, 0x00, 0x00}}), "section size mismatch", 10);
  // type section of size 7 with only 4 bytes left: the size field is at 9
  EXPECT_DECODE_ERROR(wasm({{0x01, 0x07, 0x02, 0x60, 0x00, 0x00}}), "length out of bounds", 9);
  // two concatenated headers: the second reads as a custom section of size 0x61
  EXPECT_DECODE_ERROR(wasm({{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}}), "length out of bounds", 9);
}

TEST(DecodeMalformed, HugeVectorCountIsRejectedWithoutAllocating) {
  // type section whose count is 0xffffffff; the count's LEB starts at 10
  EXPECT_DECODE_ERROR(wasm({{0x01, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f}}), "length out of bounds", 10);
  // code body whose local group count is 0x7fffffff
  EXPECT_DECODE_ERROR(
      wasm({kType0, section(3, {0x01, 0x00}), section(10, {0x01, 0x06, 0xff, 0xff, 0xff, 0xff, 0x07, 0x0b})}),
      "length out of bounds", 22);
}

TEST(DecodeMalformed, SectionOrder) {
  // (start 0) twice: the second start section id is at 21
  Bytes start = section(8, {0x00});
  EXPECT_DECODE_ERROR(wasm({kType0, section(3, {0x01, 0x00}), start, start, section(10, {0x01, 0x02, 0x00, 0x0b})}),
                      "unexpected content after last section", 21);
  // code (14..19) before function (20)
  EXPECT_DECODE_ERROR(wasm({kType0, section(10, {0x01, 0x02, 0x00, 0x0b}), section(3, {0x01, 0x00})}),
                      "unexpected content after last section", 20);
  // data count (8..10) after data (11)
  EXPECT_DECODE_ERROR(wasm({section(11, {0x00}), section(12, {0x00})}), "unexpected content after last section", 11);
}

TEST(DecodeMalformed, CustomSection) {
  // custom section without a name
  EXPECT_DECODE_ERROR(wasm({{0x00, 0x00}}), "unexpected end", 10);
  // custom section of size 1 whose name is 5 bytes long: the section ends at 11
  EXPECT_DECODE_ERROR(wasm({cat({{0x00, 0x01}, str("name")})}), "unexpected end", 11);
  // custom section name that is not UTF-8; name length at 10
  EXPECT_DECODE_ERROR(wasm({{0x00, 0x02, 0x01, 0xff}}), "malformed UTF-8 encoding", 10);
  // custom section longer than the module (size field at 9)
  EXPECT_DECODE_ERROR(wasm({cat({{0x00, 0x10}, str("x")})}), "length out of bounds", 9);
}

TEST(DecodeMalformed, Types) {
  // 0x7a, next to v128 (0x7b), names no value type: at 13
  EXPECT_DECODE_ERROR(wasm({section(1, {0x01, 0x60, 0x01, 0x7a, 0x00})}), "malformed value type", 13);
  // function type form encoded as a 2-byte LEB: the second byte is at 12
  EXPECT_DECODE_ERROR(wasm({section(1, {0x01, 0xe0, 0x7f, 0x00, 0x00})}), "integer representation too long", 12);
  EXPECT_DECODE_ERROR(wasm({section(1, {0x01, 0x61, 0x00, 0x00})}), "malformed function type", 11);
  EXPECT_DECODE_ERROR(wasm({section(1, {0x01, 0x60, 0x01, 0x40, 0x00})}), "malformed value type", 13);
}

TEST(DecodeMalformed, Imports) {
  // (import "" "" <kind 4>): kind at 13
  EXPECT_DECODE_ERROR(wasm({section(2, {0x01, 0x00, 0x00, 0x04})}), "malformed import kind", 13);
  EXPECT_DECODE_ERROR(wasm({section(2, {0x01, 0x00, 0x00, 0x80, 0x00})}), "malformed import kind", 13);
  // module name "\ff": its length byte is at 11
  EXPECT_DECODE_ERROR(wasm({section(2, {0x01, 0x01, 0xff, 0x00, 0x00, 0x00})}), "malformed UTF-8 encoding", 11);
  // 2 imports declared, 1 given, at the end of the module (17 bytes long)
  EXPECT_DECODE_ERROR(wasm({section(2, cat({{0x02}, str("m"), str("f"), {0x00, 0x00}}))}),
                      "unexpected end of section or function", 17);
  // global import with mutability 2 at 15
  EXPECT_DECODE_ERROR(wasm({section(2, {0x01, 0x00, 0x00, 0x03, 0x7f, 0x02})}), "malformed mutability", 15);
  // table import of element type i32 at 14
  EXPECT_DECODE_ERROR(wasm({section(2, {0x01, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00})}), "malformed reference type", 14);
}

TEST(DecodeMalformed, Limits) {
  // (memory) with flag 2 at 11
  EXPECT_DECODE_ERROR(wasm({section(5, {0x01, 0x02, 0x00})}), "integer too large", 11);
  // table flag 0x81 0x00: a one-bit LEB with a continuation, flagged at 13
  EXPECT_DECODE_ERROR(wasm({section(4, {0x01, 0x70, 0x81, 0x00, 0x00, 0x00})}), "integer representation too long", 13);
  // memory minimum 2 with unused bits set in its fifth byte (16)
  EXPECT_DECODE_ERROR(wasm({section(5, {0x01, 0x00, 0x82, 0x80, 0x80, 0x80, 0x70})}), "integer too large", 16);
  // memory minimum 2 in six bytes: the fifth (16) still has a continuation bit
  EXPECT_DECODE_ERROR(wasm({section(5, {0x01, 0x00, 0x82, 0x80, 0x80, 0x80, 0x80, 0x00})}),
                      "integer representation too long", 16);
  // 1 memory declared, none given: the module ends at 11
  EXPECT_DECODE_ERROR(wasm({section(5, {0x01})}), "unexpected end of section or function", 11);
}

TEST(DecodeMalformed, GlobalsAndConstantExpressions) {
  // (global i32 <mutability 2>): mutability at 12
  EXPECT_DECODE_ERROR(wasm({section(6, {0x01, 0x7f, 0x02, 0x41, 0x00, 0x0b})}), "malformed mutability", 12);
  // i32.const 0 in six bytes; the fifth LEB byte is at 18
  EXPECT_DECODE_ERROR(wasm({section(6, {0x01, 0x7f, 0x00, 0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b})}),
                      "integer representation too long", 18);
  // i32.const -1 with unused bits unset in its last byte (18)
  EXPECT_DECODE_ERROR(wasm({section(6, {0x01, 0x7f, 0x00, 0x41, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0b})}),
                      "integer too large", 18);
  // an unassigned SIMD opcode (0xfd 0x9a) at 13
  EXPECT_DECODE_ERROR(wasm({section(6, {0x01, 0x7f, 0x00, 0xfd, 0x9a, 0x01, 0x0b})}), "illegal opcode", 13);
  // an unassigned opcode at 13
  EXPECT_DECODE_ERROR(wasm({section(6, {0x01, 0x7f, 0x00, 0x06, 0x0b})}), "illegal opcode", 13);
  // an expression that never ends: the module ends at 15
  EXPECT_DECODE_ERROR(wasm({section(6, {0x01, 0x7f, 0x00, 0x41, 0x00})}), "unexpected end of section or function", 15);
}

TEST(DecodeMalformed, Exports) {
  // (export "" <kind 4> 0): kind at 12
  EXPECT_DECODE_ERROR(wasm({section(7, {0x01, 0x00, 0x04, 0x00})}), "malformed export kind", 12);
}

TEST(DecodeMalformed, ElementSegments) {
  EXPECT_DECODE_ERROR(wasm({section(9, {0x01, 0x08})}), "malformed elements segment kind", 11);
  // (elem func ...) with elemkind 1 at 12
  EXPECT_DECODE_ERROR(wasm({section(9, {0x01, 0x01, 0x01, 0x00})}), "malformed element kind", 12);
  // form 5 with element type i32 at 12
  EXPECT_DECODE_ERROR(wasm({section(9, {0x01, 0x05, 0x7f, 0x01, 0xd2, 0x00, 0x0b})}), "malformed reference type", 12);
  // form 5 whose expression starts with the unassigned opcode 0xf3 at 14
  EXPECT_DECODE_ERROR(wasm({section(9, {0x01, 0x05, 0x70, 0x01, 0xf3, 0x00, 0x0b})}), "illegal opcode", 14);
}

TEST(DecodeMalformed, DataSegments) {
  EXPECT_DECODE_ERROR(wasm({section(11, {0x01, 0x03})}), "malformed data segment kind", 11);
  // passive segment declaring 7 bytes with 6 left (from 13)
  EXPECT_DECODE_ERROR(wasm({section(11, {0x01, 0x01, 0x07, 'a', 'b', 'c', 'd', 'e', 'f'})}),
                      "unexpected end of section or function", 13);
  // data count 3 (section at 8) with 2 segments
  EXPECT_DECODE_ERROR(wasm({section(12, {0x03}), section(11, {0x02, 0x01, 0x00, 0x01, 0x00})}),
                      "data count and data section have inconsistent lengths", 8);
  // data count 1 and no data section
  EXPECT_DECODE_ERROR(wasm({section(12, {0x01})}), "data count and data section have inconsistent lengths", 8);
}

TEST(DecodeMalformed, FunctionAndCodeCounts) {
  // function section (14) with 2 functions, no code section
  EXPECT_DECODE_ERROR(wasm({kType0, section(3, {0x02, 0x00, 0x00})}),
                      "function and code section have inconsistent lengths", 14);
  // code section (8) with 1 function, no function section
  EXPECT_DECODE_ERROR(wasm({section(10, {0x01, 0x02, 0x00, 0x0b})}),
                      "function and code section have inconsistent lengths", 8);
  // 1 function, 2 bodies: the code section is at 18
  EXPECT_DECODE_ERROR(wasm({kType0, section(3, {0x01, 0x00}), section(10, {0x02, 0x02, 0x00, 0x0b, 0x02, 0x00, 0x0b})}),
                      "function and code section have inconsistent lengths", 18);
}

TEST(DecodeMalformed, TooManyLocals) {
  // 0xffffffff i32 + 2 i64: more than 2^32 - 1 locals; the locals vector is at 22
  Bytes b = wasm({kType0, section(3, {0x01, 0x00}),
                  section(10, {0x01, 0x0a, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x02, 0x7e, 0x0b})});
  EXPECT_DECODE_ERROR(b, "too many locals", 22);
  // a local count of 2^32 is not a u32 at all: the fifth LEB byte is at 27
  Bytes c = wasm({kType0, section(3, {0x01, 0x00}),
                  section(10, {0x01, 0x0a, 0x02, 0x80, 0x80, 0x80, 0x80, 0x10, 0x7f, 0x02, 0x7e, 0x0b})});
  EXPECT_DECODE_ERROR(c, "integer too large", 27);
}

TEST(DecodeMalformed, LocalsCapFromOptions) {
  // (func (local i32 i32 i32 i32)) against a cap of 3
  Bytes b = wasm({kType0, section(3, {0x01, 0x00}), section(10, {0x01, 0x04, 0x01, 0x04, 0x7f, 0x0b})});
  DecodeOptions opts;
  opts.max_locals_per_function = 3;
  auto r = decode_module(b, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "too many locals");
  EXPECT_EQ(r.error().offset, 22u);
  opts.max_locals_per_function = 4;
  EXPECT_TRUE(decode_module(b, opts).ok());
}

TEST(DecodeMalformed, TotalLocalsCapFromOptions) {
  // two functions with 4 locals each; the second's locals vector is at 28
  Bytes b = wasm({kType0, section(3, {0x02, 0x00, 0x00}),
                  section(10, {0x02, 0x04, 0x01, 0x04, 0x7f, 0x0b, 0x04, 0x01, 0x04, 0x7e, 0x0b})});
  DecodeOptions opts;
  opts.max_total_locals = 7;
  auto r = decode_module(b, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "too many locals");
  EXPECT_EQ(r.error().offset, 28u);
  opts.max_total_locals = 8;
  EXPECT_TRUE(decode_module(b, opts).ok());
}

TEST(DecodeMalformed, FunctionBodyWithoutEnd) {
  // 2 functions; the first body (23..26) is `i32.const 1 drop` with no end
  Bytes between = wasm({kType0, section(3, {0x02, 0x00, 0x00}),
                        section(10, {0x02, 0x04, 0x00, 0x41, 0x01, 0x1a, 0x05, 0x00, 0x41, 0x01, 0x1a, 0x0b})});
  EXPECT_DECODE_ERROR(between, "END opcode expected", 27);
  // the last body of the module lacks its end
  Bytes at_eof = wasm({kType0, section(3, {0x01, 0x00}), section(10, {0x01, 0x04, 0x00, 0x41, 0x01, 0x1a})});
  EXPECT_DECODE_ERROR(at_eof, "unexpected end of section or function", 26);
  // the last body of the code section lacks its end and a data section
  // follows (the reference reads the data section id as that end)
  Bytes before_data = wasm(
      {kType0, section(3, {0x01, 0x00}), section(10, {0x01, 0x04, 0x00, 0x41, 0x01, 0x1a}), section(11, {0x01, 0x00})});
  EXPECT_DECODE_ERROR(before_data, "section size mismatch", 22);
  // an empty first body (size 0 at 22) has neither locals nor end
  Bytes empty = wasm({kType0, section(3, {0x02, 0x00, 0x00}), section(10, {0x02, 0x00, 0x02, 0x00, 0x0b})});
  EXPECT_DECODE_ERROR(empty, "END opcode expected", 23);
  // a body whose declared size runs past the module
  Bytes past = wasm({kType0, section(3, {0x01, 0x00}), section(10, {0x01, 0x05, 0x00, 0x0b})});
  EXPECT_DECODE_ERROR(past, "length out of bounds", 21);
}

TEST(DecodeMalformed, InstructionsAreLeftToTheValidator) {
  // memory.size with a non-zero reserved byte is malformed, but finding it
  // needs an instruction walk, which the validator does; the decoder keeps
  // the body as bytes.
  Bytes b = wasm({kType0, section(3, {0x01, 0x00}), section(5, {0x01, 0x00, 0x00}),
                  section(10, {0x01, 0x05, 0x00, 0x3f, 0x01, 0x1a, 0x0b})});
  Module m = decode_ok(b);
  ASSERT_EQ(m.codes.size(), 1u);
  EXPECT_EQ(m.codes[0].body_end - m.codes[0].body_offset, 4u);
}

}  // namespace
}  // namespace ww::test
