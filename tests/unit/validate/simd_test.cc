// SIMD (v128) validation: the opcode rows' signatures, lane indices,
// shuffle indices, alignment of the vector loads and stores, v128 in
// select and constant expressions; and the slot width a module with v128
// is translated with.
#include <gtest/gtest.h>

#include "runtime/runtime.h"
#include "test_helpers.h"

namespace ww::testing {
namespace {

constexpr ValType v128 = ValType::V128;

std::vector<uint8_t> v128_const(uint8_t fill) {
  std::vector<uint8_t> c{0xfd, 0x0c};
  for (int i = 0; i < 16; ++i) c.push_back(fill);
  return c;
}

std::vector<uint8_t> cat(std::vector<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::string verdict_of(std::vector<ValType> params, std::vector<ValType> results, std::vector<uint8_t> code,
                       bool memory = false) {
  ModuleBuilder b;
  if (memory) b.memory(1);
  b.func(b.type(std::move(params), std::move(results)), std::move(code));
  return verdict(b.m);
}

TEST(Simd, SignaturesComeFromTheRows) {
  // (func (result v128) v128.const ... v128.const ... i32x4.add)
  EXPECT_EQ(verdict_of({}, {v128}, cat({v128_const(1), v128_const(2), {0xfd, 0xae, 0x01, 0x0b}})), "ok");
  // (func (param v128 v128 v128) (result v128) v128.bitselect)
  EXPECT_EQ(verdict_of({v128, v128, v128}, {v128}, {0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0x52, 0x0b}), "ok");
  // (func (param v128) (result i32) i8x16.bitmask; any_true)
  EXPECT_EQ(verdict_of({v128}, {i32}, {0x20, 0, 0xfd, 0x64, 0x0b}), "ok");
  EXPECT_EQ(verdict_of({v128}, {i32}, {0x20, 0, 0xfd, 0x53, 0x0b}), "ok");
  // (func (param v128 i32) (result v128) i8x16.shl)
  EXPECT_EQ(verdict_of({v128, i32}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0x6b, 0x0b}), "ok");
  // i32x4.add of an i32 and a v128: type mismatch
  EXPECT_EQ(verdict_of({v128, i32}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0xae, 0x01, 0x0b}), "type mismatch");
  // (func (param i64) (result v128) i64x2.splat), and f64x2.splat of an i64: mismatch
  EXPECT_EQ(verdict_of({i64}, {v128}, {0x20, 0, 0xfd, 0x12, 0x0b}), "ok");
  EXPECT_EQ(verdict_of({i64}, {v128}, {0x20, 0, 0xfd, 0x14, 0x0b}), "type mismatch");
}

TEST(Simd, LaneIndicesAreBounded) {
  // i8x16.extract_lane_s 15 ok, 16 not; i64x2.replace_lane 1 ok, 2 not
  EXPECT_EQ(verdict_of({v128}, {i32}, {0x20, 0, 0xfd, 0x15, 15, 0x0b}), "ok");
  EXPECT_EQ(verdict_of({v128}, {i32}, {0x20, 0, 0xfd, 0x15, 16, 0x0b}), "invalid lane index");
  EXPECT_EQ(verdict_of({v128, i64}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0x1e, 1, 0x0b}), "ok");
  EXPECT_EQ(verdict_of({v128, i64}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0x1e, 2, 0x0b}), "invalid lane index");
  // i8x16.shuffle: indices up to 31
  std::vector<uint8_t> shuf{0x20, 0, 0x20, 1, 0xfd, 0x0d};
  for (int i = 0; i < 16; ++i) shuf.push_back(uint8_t(31 - i));
  shuf.push_back(0x0b);
  EXPECT_EQ(verdict_of({v128, v128}, {v128}, shuf), "ok");
  shuf[6 + 3] = 32;
  EXPECT_EQ(verdict_of({v128, v128}, {v128}, shuf), "invalid lane index");
}

TEST(Simd, MemoryAccessesNeedAMemoryAndNaturalAlignment) {
  // (func (param i32) (result v128) v128.load align=16)
  EXPECT_EQ(verdict_of({i32}, {v128}, {0x20, 0, 0xfd, 0x00, 4, 0, 0x0b}, true), "ok");
  EXPECT_EQ(verdict_of({i32}, {v128}, {0x20, 0, 0xfd, 0x00, 5, 0, 0x0b}, true),
            "alignment must not be larger than natural");
  EXPECT_EQ(verdict_of({i32}, {v128}, {0x20, 0, 0xfd, 0x00, 4, 0, 0x0b}, false), "unknown memory 0");
  // v128.load8x8_s: 8 bytes, so align=8 at most
  EXPECT_EQ(verdict_of({i32}, {v128}, {0x20, 0, 0xfd, 0x01, 3, 0, 0x0b}, true), "ok");
  EXPECT_EQ(verdict_of({i32}, {v128}, {0x20, 0, 0xfd, 0x01, 4, 0, 0x0b}, true),
            "alignment must not be larger than natural");
  // (func (param i32 v128) (result v128) v128.load32_lane align=4 offset=0 lane 3), lane 4 too far
  EXPECT_EQ(verdict_of({i32, v128}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0x56, 2, 0, 3, 0x0b}, true), "ok");
  EXPECT_EQ(verdict_of({i32, v128}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0x56, 2, 0, 4, 0x0b}, true), "invalid lane index");
  EXPECT_EQ(verdict_of({i32, v128}, {v128}, {0x20, 0, 0x20, 1, 0xfd, 0x56, 3, 0, 0, 0x0b}, true),
            "alignment must not be larger than natural");
  // (func (param i32 v128) v128.store8_lane 0 0 15)
  EXPECT_EQ(verdict_of({i32, v128}, {}, {0x20, 0, 0x20, 1, 0xfd, 0x58, 0, 0, 15, 0x0b}, true), "ok");
}

TEST(Simd, SelectTakesVectorsAndConstantExpressionsMakeThem) {
  // (func (param v128 v128 i32) (result v128) select)
  EXPECT_EQ(verdict_of({v128, v128, i32}, {v128}, {0x20, 0, 0x20, 1, 0x20, 2, 0x1b, 0x0b}), "ok");
  // (global v128 (v128.const ...)) and one with an i32.const: mismatch
  ModuleBuilder b;
  Global g;
  g.type = GlobalType{v128, false};
  Instr in;
  in.op = Opcode::V128Const;
  g.init.instrs.push_back(in);
  b.m.globals.push_back(g);
  EXPECT_EQ(verdict(b.m), "ok");
  b.m.globals[0].init.instrs[0].op = Opcode::I32Const;
  EXPECT_EQ(verdict(b.m), "type mismatch");
}

// A module that holds v128 anywhere (a type, or only an instruction) is
// translated with two slots per value; one without keeps one.
TEST(Simd, ModulesWithV128TakeTwoSlotsPerValue) {
  // (module (func (param v128)))
  const std::vector<uint8_t> param = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x01,
                                      0x7b, 0x00, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b};
  auto m = compile_module(param);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ((*m)->code.bytecode.slot_width, 2u);
  EXPECT_EQ((*m)->code.bytecode.funcs[0].num_params, 2u);
  // (module (func (result i32) v128.const 0 i32x4.extract_lane 0)): no v128 in any type
  std::vector<uint8_t> body = cat({{0x00}, v128_const(0), {0xfd, 0x1b, 0x00, 0x0b}});
  std::vector<uint8_t> mod = {0x00,
                              0x61,
                              0x73,
                              0x6d,
                              0x01,
                              0x00,
                              0x00,
                              0x00,
                              0x01,
                              0x05,
                              0x01,
                              0x60,
                              0x00,
                              0x01,
                              0x7f,
                              0x03,
                              0x02,
                              0x01,
                              0x00,
                              0x0a,
                              uint8_t(body.size() + 2),
                              0x01,
                              uint8_t(body.size())};
  mod.insert(mod.end(), body.begin(), body.end());
  m = compile_module(mod);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ((*m)->code.bytecode.slot_width, 2u);
  // (module (func (result i32) i32.const 7))
  const std::vector<uint8_t> plain = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01,
                                      0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x03, 0x02, 0x01,
                                      0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x07, 0x0b};
  m = compile_module(plain);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ((*m)->code.bytecode.slot_width, 1u);
}

}  // namespace
}  // namespace ww::testing
