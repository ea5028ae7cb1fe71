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
    ASSERT_TRUE(info.prefix == 0 || info.prefix == 0xFC);
    if (info.prefix == 0) {
      EXPECT_LT(info.code, 256u);
    }
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
    if (info.imm == Imm::Mem) {
      ++accesses;
      EXPECT_TRUE(info.mem_size == 1 || info.mem_size == 2 || info.mem_size == 4 || info.mem_size == 8);
      // Every load/store takes an i32 address first.
      EXPECT_EQ(info.p1, OpType::I32);
    } else {
      EXPECT_EQ(info.mem_size, 0);
    }
  }
  EXPECT_EQ(accesses, 23);  // 14 loads + 9 stores in WebAssembly 2.0 (no SIMD)
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
  EXPECT_FALSE(lookup_opcode(0xFD, 0, &op));
  EXPECT_TRUE(lookup_opcode(0xFC, 17, &op));
  EXPECT_EQ(op, Opcode::TableFill);
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
}

TEST(InstrReader, Errors) {
  Instr in;
  Status s = read({0x3f, 0x01}, in);  // memory.size with a non-zero reserved byte
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "zero byte expected");
  EXPECT_EQ(s.error().offset, 1u);
  s = read({0x40, 0x80, 0x00}, in);  // a "long" zero is not the zero byte
  EXPECT_EQ(s.error().message, "zero byte expected");
  s = read({0xfd, 0x0c}, in);
  EXPECT_EQ(s.error().message, "SIMD is not supported yet");
  s = read({0x1c, 0x01, 0x7b}, in);
  EXPECT_EQ(s.error().message, "SIMD is not supported yet");
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
