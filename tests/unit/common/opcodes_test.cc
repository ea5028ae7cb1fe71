// The opcode table and the instruction reader generated from it.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "wasm/instr_reader.h"
#include "wasm/opcodes.h"

namespace ww {
namespace {

TEST(OpcodeTable, EveryOpcodeRoundTripsThroughLookup) {
  for (int i = 0; i < kOpcodeCount; ++i) {
    Opcode op = static_cast<Opcode>(i);
    const OpcodeInfo& info = opcode_info(op);
    SCOPED_TRACE(info.name ? info.name : "(null)");
    ASSERT_NE(info.name, nullptr);
    EXPECT_NE(std::string(info.name), "");
    ASSERT_TRUE(info.prefix == 0 || info.prefix == 0xFC || info.prefix == 0xFD);
    if (info.prefix == 0) EXPECT_LT(info.code, 256u);
    if (info.prefix == 0xFD) EXPECT_LT(info.code, 0x114u);  // relaxed SIMD ends at 0x113
    Opcode back;
    ASSERT_TRUE(lookup_opcode(info.prefix, info.code, &back));
    EXPECT_EQ(back, op);
    EXPECT_STREQ(opcode_name(op), info.name);
  }
}

TEST(OpcodeTable, NamesAreUnique) {
  std::map<std::string, std::vector<Opcode>> by_name;
  for (int i = 0; i < kOpcodeCount; ++i) by_name[opcode_info(Opcode(i)).name].push_back(Opcode(i));
  for (const auto& [name, ops] : by_name) {
    // The text format spells both the untyped and the typed select `select`.
    if (name == "select") {
      EXPECT_EQ(ops, (std::vector<Opcode>{Opcode::Select, Opcode::SelectT}));
      continue;
    }
    EXPECT_EQ(ops.size(), 1u) << name;
  }
}

TEST(OpcodeTable, MemoryAccessesHaveASize) {
  int accesses = 0;
  for (int i = 0; i < kOpcodeCount; ++i) {
    const OpcodeInfo& info = opcode_info(Opcode(i));
    SCOPED_TRACE(info.name);
    if (info.imm == Imm::Mem || info.imm == Imm::MemLane) {
      ++accesses;
      EXPECT_TRUE(info.mem_size == 1 || info.mem_size == 2 || info.mem_size == 4 || info.mem_size == 8 ||
                  info.mem_size == 16);
      // Every load/store takes an i32 address first.
      EXPECT_EQ(info.p1, OpType::I32);
    } else {
      EXPECT_EQ(info.mem_size, 0);
    }
  }
  // 14 loads + 9 stores, and SIMD's 11 loads and one store, 2
  // zero-extending loads, and 8 lane loads and stores.
  EXPECT_EQ(accesses, 23 + 11 + 1 + 2 + 8);
  EXPECT_EQ(opcode_info(Opcode::I64Load32U).mem_size, 4);
  EXPECT_EQ(opcode_info(Opcode::I32Store16).mem_size, 2);
}

TEST(OpcodeTable, UnassignedCodesAreNotFound) {
  Opcode op;
  EXPECT_FALSE(lookup_opcode(0, 0x06, &op));
  EXPECT_FALSE(lookup_opcode(0, 0x27, &op));
  EXPECT_FALSE(lookup_opcode(0, 0xFC, &op));  // a prefix, not an opcode
  EXPECT_FALSE(lookup_opcode(0, 0xFF, &op));
  EXPECT_FALSE(lookup_opcode(0, 300, &op));
  EXPECT_FALSE(lookup_opcode(0xFC, 18, &op));
  EXPECT_FALSE(lookup_opcode(0xFC, 0xFFFFFFFF, &op));
  EXPECT_TRUE(lookup_opcode(0xFC, 17, &op));
  EXPECT_EQ(op, Opcode::TableFill);
  // SIMD: 236 of the codes below 256, and relaxed SIMD's 20 (0x100-0x113).
  int simd = 0;
  for (uint32_t code = 0; code < 0x200; ++code) simd += lookup_opcode(0xFD, code, &op);
  EXPECT_EQ(simd, 236 + 20);
  for (uint32_t code : {0x9Au, 0xA2u, 0xBBu, 0xEEu, 0x114u, 0x1FFu, 0xFFFFFFFFu})
    EXPECT_FALSE(lookup_opcode(0xFD, code, &op)) << code;
  ASSERT_TRUE(lookup_opcode(0xFD, 0x113, &op));
  EXPECT_STREQ(opcode_name(op), "i32x4.relaxed_dot_i8x16_i7x16_add_s");
  ASSERT_TRUE(lookup_opcode(0xFD, 0x62, &op));
  EXPECT_STREQ(opcode_name(op), "i8x16.popcnt");
  ASSERT_TRUE(lookup_opcode(0xFD, 0xBA, &op));
  EXPECT_STREQ(opcode_name(op), "i32x4.dot_i16x8_s");
}

TEST(OpcodeTable, SimdLaneBounds) {
  EXPECT_EQ(simd_lanes(Opcode::I8x16ExtractLaneS), 16u);
  EXPECT_EQ(simd_lanes(Opcode::I16x8ReplaceLane), 8u);
  EXPECT_EQ(simd_lanes(Opcode::F32x4ExtractLane), 4u);
  EXPECT_EQ(simd_lanes(Opcode::I64x2ReplaceLane), 2u);
  EXPECT_EQ(simd_lanes(Opcode::V128Load8Lane), 16u);
  EXPECT_EQ(simd_lanes(Opcode::V128Store64Lane), 2u);
  EXPECT_EQ(simd_lanes(Opcode::I8x16Shuffle), 32u);
  EXPECT_EQ(simd_lanes(Opcode::I32x4Add), 0u);
}

Status read(const std::vector<uint8_t>& b, Instr& in, size_t* consumed = nullptr) {
  ByteReader r(b.data(), b.size());
  Status s = read_instr(r, in);
  if (consumed) *consumed = b.size() - r.remaining();
  return s;
}

TEST(InstrReader, Immediates) {
  Instr in;
  size_t n;
  // br_table 1 2 0
  ASSERT_TRUE(read({0x0e, 0x02, 0x01, 0x02, 0x00}, in, &n).ok());
  EXPECT_EQ(in.op, Opcode::BrTable);
  EXPECT_EQ(in.targets, (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(n, 5u);
  // i32.load offset=16 align=4 (exponent 2)
  ASSERT_TRUE(read({0x28, 0x02, 0x10}, in).ok());
  EXPECT_EQ(in.a, 2u);
  EXPECT_EQ(in.imm, 16u);
  // i64.const -2
  ASSERT_TRUE(read({0x42, 0x7e}, in).ok());
  EXPECT_EQ(in.imm, ~uint64_t{1});
  // block (result f64), block (type 3), block
  ASSERT_TRUE(read({0x02, 0x7c}, in).ok());
  EXPECT_EQ(in.block.kind, BlockType::Value);
  EXPECT_EQ(in.block.type, ValType::F64);
  ASSERT_TRUE(read({0x02, 0x03}, in).ok());
  EXPECT_EQ(in.block.kind, BlockType::Index);
  EXPECT_EQ(in.block.index, 3u);
  ASSERT_TRUE(read({0x02, 0x40}, in).ok());
  EXPECT_EQ(in.block.kind, BlockType::Void);
  // memory.init 5 (then the reserved zero byte)
  ASSERT_TRUE(read({0xfc, 0x08, 0x05, 0x00}, in).ok());
  EXPECT_EQ(in.op, Opcode::MemoryInit);
  EXPECT_EQ(in.a, 5u);
  // select (result externref)
  ASSERT_TRUE(read({0x1c, 0x01, 0x6f}, in).ok());
  EXPECT_EQ(in.select_types, (std::vector<ValType>{ValType::ExternRef}));
  // select (result v128)
  ASSERT_TRUE(read({0x1c, 0x01, 0x7b}, in).ok());
  EXPECT_EQ(in.select_types, (std::vector<ValType>{ValType::V128}));
  // v128.const i32x4 1 2 3 4: 16 raw bytes
  ASSERT_TRUE(read({0xfd, 0x0c, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, in, &n).ok());
  EXPECT_EQ(in.op, Opcode::V128Const);
  EXPECT_EQ(in.bytes[4], 2);
  EXPECT_EQ(n, 18u);
  // i16x8.abs: a two-byte LEB sub-opcode (0x80 0x01)
  ASSERT_TRUE(read({0xfd, 0x80, 0x01}, in).ok());
  EXPECT_EQ(in.op, Opcode::I16x8Abs);
  // i32x4.extract_lane 3; v128.load16_lane align=1 offset=8 lane 7
  ASSERT_TRUE(read({0xfd, 0x1b, 0x03}, in).ok());
  EXPECT_EQ(in.lane, 3);
  ASSERT_TRUE(read({0xfd, 0x55, 0x01, 0x08, 0x07}, in, &n).ok());
  EXPECT_EQ(in.op, Opcode::V128Load16Lane);
  EXPECT_EQ(in.a, 1u);
  EXPECT_EQ(in.imm, 8u);
  EXPECT_EQ(in.lane, 7);
  EXPECT_EQ(n, 5u);
  // i8x16.shuffle with 16 lane bytes
  ASSERT_TRUE(read({0xfd, 0x0d, 0, 17, 2, 19, 4, 21, 6, 23, 8, 25, 10, 27, 12, 29, 14, 31}, in).ok());
  EXPECT_EQ(in.bytes[1], 17);
  EXPECT_EQ(in.bytes[15], 31);
}

TEST(InstrReader, Errors) {
  Instr in;
  Status s = read({0x3f, 0x01}, in);  // memory.size with a non-zero reserved byte
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "zero byte expected");
  EXPECT_EQ(s.error().offset, 1u);
  s = read({0x40, 0x80, 0x00}, in);  // a "long" zero is not the zero byte
  EXPECT_EQ(s.error().message, "zero byte expected");
  s = read({0xfd, 0x9a, 0x01}, in);  // an unassigned SIMD code
  EXPECT_EQ(s.error().message, "illegal opcode");
  s = read({0xfd, 0x0c, 1, 2, 3}, in);  // v128.const cut short
  EXPECT_EQ(s.error().message, "unexpected end");
  s = read({0x06}, in);
  EXPECT_EQ(s.error().message, "illegal opcode");
  s = read({0xfc, 0x12}, in);
  EXPECT_EQ(s.error().message, "illegal opcode");
  EXPECT_EQ(s.error().offset, 0u);
  // a br_table whose count exceeds the bytes left
  s = read({0x0e, 0xff, 0xff, 0xff, 0xff, 0x0f}, in);
  EXPECT_EQ(s.error().message, "unexpected end");
  s = read({0xd0, 0x7f}, in);
  EXPECT_EQ(s.error().message, "malformed reference type");
  s = read({0x41}, in);
  EXPECT_EQ(s.error().message, "unexpected end");
}

}  // namespace
}  // namespace ww
