// Function-body validation: the operand/control stack rules, each error
// message kind, and error offsets.
#include <gtest/gtest.h>

#include "test_helpers.h"

namespace ww::testing {
namespace {

// One function of type `params -> results` with body `code`.
std::string body_verdict(std::vector<ValType> params, std::vector<ValType> results, std::vector<uint8_t> code,
                         std::vector<ValType> locals = {}) {
  ModuleBuilder b;
  b.func(b.type(std::move(params), std::move(results)), std::move(code), std::move(locals));
  return verdict(b.m);
}

TEST(FuncBody, AddsTwoParams) {
  // (func (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  EXPECT_EQ(body_verdict({i32, i32}, {i32}, {0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b}), "ok");
}

TEST(FuncBody, OperandTypeMismatchReportsInstructionOffset) {
  // (func (result i32) i32.const 1 i64.const 2 i32.add)
  ModuleBuilder b;
  uint32_t at = b.func(b.type({}, {i32}), {0x41, 0x01, 0x42, 0x02, 0x6a, 0x0b});
  Status s = validate_module(b.m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "type mismatch");
  EXPECT_EQ(s.error().offset, at + 4);  // the i32.add
}

TEST(FuncBody, MissingResultIsTypeMismatch) {
  // (func (result i32))
  EXPECT_EQ(body_verdict({}, {i32}, {0x0b}), "type mismatch");
  // (func (result i32) i32.const 0 i32.const 0) -- one value too many
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x00, 0x41, 0x00, 0x0b}), "type mismatch");
  // (func i32.const 0) -- leftover value in a void function
  EXPECT_EQ(body_verdict({}, {}, {0x41, 0x00, 0x0b}), "type mismatch");
}

TEST(FuncBody, PolymorphicStackAfterUnreachable) {
  // (func (result i32) unreachable i32.add)
  EXPECT_EQ(body_verdict({}, {i32}, {0x00, 0x6a, 0x0b}), "ok");
  // (func unreachable drop drop)
  EXPECT_EQ(body_verdict({}, {}, {0x00, 0x1a, 0x1a, 0x0b}), "ok");
  // (func (result i32) unreachable i64.const 0 i32.add) -- known operand still checked
  EXPECT_EQ(body_verdict({}, {i32}, {0x00, 0x42, 0x00, 0x6a, 0x0b}), "type mismatch");
  // (func (result i32) return f32.const 0) -- the value left must still match
  EXPECT_EQ(body_verdict({}, {i32}, {0x0f, 0x43, 0, 0, 0, 0, 0x0b}), "type mismatch");
  // (func (result i32) unreachable select) -- select of unknowns yields an unknown
  EXPECT_EQ(body_verdict({}, {i32}, {0x00, 0x1b, 0x0b}), "ok");
  // (func (result i32) i32.const 0 br 0 i32.const 1) -- ok: unreachable tail
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x00, 0x0c, 0x00, 0x41, 0x01, 0x0b}), "ok");
  // (func (result i32) br 0) -- the branch itself still needs its operand
  EXPECT_EQ(body_verdict({}, {i32}, {0x0c, 0x00, 0x0b}), "type mismatch");
}

TEST(FuncBody, UnreachableIsScopedToItsBlock) {
  // (func (result i32) block unreachable end i32.add) -- outer stack is not polymorphic
  EXPECT_EQ(body_verdict({}, {i32}, {0x02, 0x40, 0x00, 0x0b, 0x6a, 0x0b}), "type mismatch");
}

TEST(FuncBody, BlockTypeIndexWithParams) {
  ModuleBuilder b;
  uint32_t ft = b.type({}, {i32});
  uint32_t bt = b.type({i32, i32}, {i32});
  ASSERT_EQ(bt, 1u);
  // (func (result i32) i32.const 1 i32.const 2 block (type 1) i32.add end)
  b.func(ft, {0x41, 0x01, 0x41, 0x02, 0x02, 0x01, 0x6a, 0x0b, 0x0b});
  EXPECT_EQ(verdict(b.m), "ok");

  // (func (result i32) i32.const 1 block (type 1) i32.add end) -- one input missing
  ModuleBuilder c;
  c.func(c.type({}, {i32}), {0x41, 0x01, 0x02, 0x01, 0x6a, 0x0b, 0x0b});
  c.type({i32, i32}, {i32});
  EXPECT_EQ(verdict(c.m), "type mismatch");

  // block (type 7) with only two types -> unknown type
  EXPECT_EQ(body_verdict({}, {}, {0x02, 0x07, 0x0b, 0x0b}), "unknown type 7");
}

TEST(FuncBody, BlockCannotSeeOuterOperands) {
  // (func (result i32) i32.const 1 block (result i32) i32.eqz end) -- i32.eqz sees an empty block stack
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x01, 0x02, 0x7f, 0x45, 0x0b, 0x0b}), "type mismatch");
}

TEST(FuncBody, LoopLabelTakesLoopParams) {
  // type 1 = [i32] -> [f32]
  // (func (result f32) i32.const 0 loop (type 1) br 0 end)  -- br to a loop carries its params (i32)
  ModuleBuilder b;
  b.func(b.type({}, {f32}), {0x41, 0x00, 0x03, 0x01, 0x0c, 0x00, 0x0b, 0x0b});
  b.type({i32}, {f32});
  EXPECT_EQ(verdict(b.m), "ok");

  // (func (result f32) i32.const 0 loop (type 1) drop f32.const 0 br 0 end) -- f32 is not the loop's param
  ModuleBuilder c;
  c.func(c.type({}, {f32}), {0x41, 0x00, 0x03, 0x01, 0x1a, 0x43, 0, 0, 0, 0, 0x0c, 0x00, 0x0b, 0x0b});
  c.type({i32}, {f32});
  EXPECT_EQ(verdict(c.m), "type mismatch");
}

TEST(FuncBody, IfElse) {
  // (func (param i32) (result i32) local.get 0 if (result i32) i32.const 1 else i32.const 2 end)
  EXPECT_EQ(body_verdict({i32}, {i32}, {0x20, 0x00, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x41, 0x02, 0x0b, 0x0b}), "ok");
  // (func (param i32) (result i32) local.get 0 if (result i32) i32.const 1 end) -- no else: mismatch
  EXPECT_EQ(body_verdict({i32}, {i32}, {0x20, 0x00, 0x04, 0x7f, 0x41, 0x01, 0x0b, 0x0b}), "type mismatch");
  // if (type [i32]->[i32]) without else passes its input through: ok
  ModuleBuilder b;
  b.func(b.type({i32}, {i32}), {0x20, 0x00, 0x20, 0x00, 0x04, 0x01, 0x0b, 0x0b});
  b.type({i32}, {i32});
  EXPECT_EQ(verdict(b.m), "ok");
  // else branch with wrong type: ... else f32.const 0 end
  EXPECT_EQ(body_verdict({i32}, {i32}, {0x20, 0x00, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x43, 0, 0, 0, 0, 0x0b, 0x0b}),
            "type mismatch");
  // if without condition
  EXPECT_EQ(body_verdict({}, {}, {0x04, 0x40, 0x0b, 0x0b}), "type mismatch");
  // else outside an if: (func else end)
  EXPECT_NE(body_verdict({}, {}, {0x05, 0x0b}), "ok");
}

TEST(FuncBody, Branches) {
  // (func (result i32) block (result i32) i32.const 1 br 0 end)
  EXPECT_EQ(body_verdict({}, {i32}, {0x02, 0x7f, 0x41, 0x01, 0x0c, 0x00, 0x0b, 0x0b}), "ok");
  // (func br 1) -- only the function label exists
  EXPECT_EQ(body_verdict({}, {}, {0x0c, 0x01, 0x0b}), "unknown label 1");
  // (func (result i32) i32.const 1 i32.const 0 br_if 0) -- br_if leaves the value
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x01, 0x41, 0x00, 0x0d, 0x00, 0x0b}), "ok");
  // (func (result i32) i64.const 1 i32.const 0 br_if 0)
  EXPECT_EQ(body_verdict({}, {i32}, {0x42, 0x01, 0x41, 0x00, 0x0d, 0x00, 0x0b}), "type mismatch");
  // (func (result i32) i32.const 7 return)
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x07, 0x0f, 0x0b}), "ok");
  // (func (result i32) return) -- return needs the result
  EXPECT_EQ(body_verdict({}, {i32}, {0x0f, 0x0b}), "type mismatch");
}

TEST(FuncBody, BrTable) {
  // (func (param i32) (result i32)
  //   block (result i32) block (result i32) i32.const 5 local.get 0 br_table 0 1 0 end end)
  EXPECT_EQ(
      body_verdict({i32}, {i32},
                   {0x02, 0x7f, 0x02, 0x7f, 0x41, 0x05, 0x20, 0x00, 0x0e, 0x02, 0x00, 0x01, 0x00, 0x0b, 0x0b, 0x0b}),
      "ok");
  // targets of different arity: block (void) inside block (result i32)
  // (func (param i32) (result i32) block (result i32) block i32.const 5 local.get 0 br_table 0 1 end
  //   i32.const 0 end)
  EXPECT_EQ(body_verdict(
                {i32}, {i32},
                {0x02, 0x7f, 0x02, 0x40, 0x41, 0x05, 0x20, 0x00, 0x0e, 0x01, 0x00, 0x01, 0x0b, 0x41, 0x00, 0x0b, 0x0b}),
            "type mismatch");
  // same arity, different types: block (result f32) and the function (result i32)
  EXPECT_EQ(body_verdict({i32}, {i32},
                         {0x02, 0x7d, 0x41, 0x05, 0x20, 0x00, 0x0e, 0x01, 0x00, 0x01, 0x0b, 0x1a, 0x41, 0x00, 0x0b}),
            "type mismatch");
  // unknown label in the table
  EXPECT_EQ(body_verdict({i32}, {}, {0x20, 0x00, 0x0e, 0x01, 0x05, 0x00, 0x0b}), "unknown label 5");
  // In unreachable code, targets of different types but equal arity are fine:
  // (func (result i32) block (result f32) unreachable br_table 0 1 end drop i32.const 0)
  EXPECT_EQ(body_verdict({}, {i32}, {0x02, 0x7d, 0x00, 0x0e, 0x01, 0x00, 0x01, 0x0b, 0x1a, 0x41, 0x00, 0x0b}), "ok");
  // index must be i32
  EXPECT_EQ(body_verdict({}, {}, {0x42, 0x00, 0x0e, 0x00, 0x00, 0x0b}), "type mismatch");
}

TEST(FuncBody, Select) {
  // (func (result i64) i64.const 1 i64.const 2 i32.const 0 select)
  EXPECT_EQ(body_verdict({}, {i64}, {0x42, 0x01, 0x42, 0x02, 0x41, 0x00, 0x1b, 0x0b}), "ok");
  // operands of different types
  EXPECT_EQ(body_verdict({}, {i64}, {0x42, 0x01, 0x41, 0x02, 0x41, 0x00, 0x1b, 0x0b}), "type mismatch");
  // untyped select on references: (select (ref.null func) (ref.null func) (i32.const 0))
  EXPECT_EQ(body_verdict({}, {funcref}, {0xd0, 0x70, 0xd0, 0x70, 0x41, 0x00, 0x1b, 0x0b}), "type mismatch");
  // select (result funcref)
  EXPECT_EQ(body_verdict({}, {funcref}, {0xd0, 0x70, 0xd0, 0x70, 0x41, 0x00, 0x1c, 0x01, 0x70, 0x0b}), "ok");
  // select with two result types / with none
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x01, 0x41, 0x02, 0x41, 0x00, 0x1c, 0x02, 0x7f, 0x7f, 0x0b}),
            "invalid result arity");
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x01, 0x41, 0x02, 0x41, 0x00, 0x1c, 0x00, 0x0b}), "invalid result arity");
  // unreachable then a reference operand: the known operand is still not numeric
  EXPECT_EQ(body_verdict({}, {}, {0x00, 0xd0, 0x70, 0x41, 0x00, 0x1b, 0x1a, 0x0b}), "type mismatch");
}

TEST(FuncBody, Locals) {
  // (func (param i32) (local i64) local.get 1 local.set 1 local.get 0 local.tee 0 drop)
  EXPECT_EQ(body_verdict({i32}, {}, {0x20, 0x01, 0x21, 0x01, 0x20, 0x00, 0x22, 0x00, 0x1a, 0x0b}, {i64}), "ok");
  EXPECT_EQ(body_verdict({i32}, {}, {0x20, 0x02, 0x1a, 0x0b}, {i64}), "unknown local 2");
  EXPECT_EQ(body_verdict({}, {}, {0x41, 0x00, 0x21, 0x00, 0x0b}), "unknown local 0");
  // local.set of the wrong type
  EXPECT_EQ(body_verdict({i32}, {}, {0x42, 0x00, 0x21, 0x00, 0x0b}), "type mismatch");
}

TEST(FuncBody, Globals) {
  ModuleBuilder b;
  b.import_global(i32, false);
  b.global(i64, true, cexpr({op_i64(0)}));
  uint32_t t = b.type({}, {});
  b.func(t, {0x23, 0x00, 0x1a, 0x42, 0x01, 0x24, 0x01, 0x0b});  // global.get 0 drop i64.const 1 global.set 1
  EXPECT_EQ(verdict(b.m), "ok");
  b.func(t, {0x41, 0x01, 0x24, 0x00, 0x0b});  // global.set 0 (immutable)
  EXPECT_EQ(verdict(b.m), "global is immutable");
  b.m.codes.pop_back();
  b.m.funcs.pop_back();
  b.func(t, {0x23, 0x02, 0x1a, 0x0b});
  EXPECT_EQ(verdict(b.m), "unknown global 2");
}

TEST(FuncBody, Calls) {
  ModuleBuilder b;
  uint32_t t0 = b.type({i32}, {i64});
  uint32_t t1 = b.type({}, {});
  b.import_func(t0);
  // (func call 0 with an i32, drop the i64)
  b.func(t1, {0x41, 0x05, 0x10, 0x00, 0x1a, 0x0b});
  EXPECT_EQ(verdict(b.m), "ok");
  ModuleBuilder c = b;
  c.func(t1, {0x10, 0x09, 0x0b});
  EXPECT_EQ(verdict(c.m), "unknown function 9");
  ModuleBuilder d = b;
  d.func(t1, {0x42, 0x05, 0x10, 0x00, 0x1a, 0x0b});  // wrong argument type
  EXPECT_EQ(verdict(d.m), "type mismatch");

  // call_indirect (type 0) through table 0
  std::vector<uint8_t> ci = {0x41, 0x05, 0x41, 0x00, 0x11, 0x00, 0x00, 0x1a, 0x0b};
  ModuleBuilder e = b;
  e.func(t1, ci);
  EXPECT_EQ(verdict(e.m), "unknown table 0");
  e.table(funcref, 1);
  EXPECT_EQ(verdict(e.m), "ok");
  e.m.tables[0].elem = externref;
  EXPECT_EQ(verdict(e.m), "type mismatch");
  ModuleBuilder f = b;
  f.table(funcref, 1);
  f.func(t1, {0x41, 0x05, 0x41, 0x00, 0x11, 0x07, 0x00, 0x1a, 0x0b});
  EXPECT_EQ(verdict(f.m), "unknown type 7");
}

TEST(FuncBody, MemoryInstructions) {
  // (func (result i32) i32.const 0 i32.load align=4)
  std::vector<uint8_t> load = {0x41, 0x00, 0x28, 0x02, 0x00, 0x0b};
  EXPECT_EQ(body_verdict({}, {i32}, load), "unknown memory 0");
  ModuleBuilder b;
  b.memory(1);
  b.func(b.type({}, {i32}), load);
  EXPECT_EQ(verdict(b.m), "ok");
  // align=8 on a 4-byte load
  b.m.bytes[b.m.codes[0].body_offset + 3] = 0x03;
  EXPECT_EQ(verdict(b.m), "alignment must not be larger than natural");
  // a huge exponent must not be shifted blindly
  ModuleBuilder c;
  c.memory(1);
  c.func(c.type({}, {i32}), {0x41, 0x00, 0x28, 0x40, 0x00, 0x0b});
  EXPECT_EQ(verdict(c.m), "alignment must not be larger than natural");
  // memory.size / memory.grow
  EXPECT_EQ(body_verdict({}, {i32}, {0x3f, 0x00, 0x0b}), "unknown memory 0");
  ModuleBuilder d;
  d.memory(1);
  d.func(d.type({}, {i32}), {0x41, 0x01, 0x40, 0x00, 0x0b});
  EXPECT_EQ(verdict(d.m), "ok");
}

TEST(FuncBody, BulkMemory) {
  // memory.init 0 (i32.const 0) (i32.const 0) (i32.const 0)
  std::vector<uint8_t> init = {0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x08, 0x00, 0x00, 0x0b};
  ModuleBuilder b;
  b.memory(1);
  b.func(b.type({}, {}), init);
  // no data segments and no data count section: the index is unknown either way
  EXPECT_EQ(verdict(b.m), "unknown data segment 0");
  b.m.data_count = 0;
  EXPECT_EQ(verdict(b.m), "unknown data segment 0");
  DataSegment d;
  d.mode = SegmentMode::Passive;
  b.m.datas.push_back(d);
  b.m.data_count.reset();
  EXPECT_EQ(verdict(b.m), "data count section required");
  b.m.data_count = 1;
  EXPECT_EQ(verdict(b.m), "ok");
  // data.drop 1
  b.func(b.m.funcs[0], {0xfc, 0x09, 0x01, 0x0b});
  EXPECT_EQ(verdict(b.m), "unknown data segment 1");

  ModuleBuilder c;
  c.m.data_count = 0;
  c.func(c.type({}, {}), init);
  EXPECT_EQ(verdict(c.m), "unknown memory 0");
}

TEST(FuncBody, TableInstructions) {
  ModuleBuilder b;
  b.table(funcref, 1);
  b.table(externref, 1);
  uint32_t t = b.type({}, {});
  // table.get 1 is externref, table.set 0 needs funcref
  b.func(t, {0x41, 0x00, 0x41, 0x00, 0x25, 0x01, 0x26, 0x00, 0x0b});
  EXPECT_EQ(verdict(b.m), "type mismatch");
  b.m = ModuleBuilder().m;
  b.table(funcref, 1);
  b.table(externref, 1);
  t = b.type({}, {});
  // (table.grow 1 (ref.null extern) (i32.const 1)) drop; table.size 0 drop
  b.func(t, {0xd0, 0x6f, 0x41, 0x01, 0xfc, 0x0f, 0x01, 0x1a, 0xfc, 0x10, 0x00, 0x1a, 0x0b});
  EXPECT_EQ(verdict(b.m), "ok");
  // table.copy 0 1: element types differ
  ModuleBuilder c = b;
  c.func(t, {0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0e, 0x00, 0x01, 0x0b});
  EXPECT_EQ(verdict(c.m), "type mismatch");
  // table.init 0 0 without segments / elem.drop 4
  ModuleBuilder d = b;
  d.func(t, {0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0c, 0x00, 0x00, 0x0b});
  EXPECT_EQ(verdict(d.m), "unknown elem segment 0");
  ModuleBuilder e = b;
  e.func(t, {0xfc, 0x0d, 0x04, 0x0b});
  EXPECT_EQ(verdict(e.m), "unknown elem segment 4");
  ModuleBuilder f;
  f.func(f.type({}, {}), {0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0c, 0x00, 0x00, 0x0b});
  EXPECT_EQ(verdict(f.m), "unknown table 0");
}

TEST(FuncBody, References) {
  // (func (result i32) ref.null extern ref.is_null)
  EXPECT_EQ(body_verdict({}, {i32}, {0xd0, 0x6f, 0xd1, 0x0b}), "ok");
  EXPECT_EQ(body_verdict({}, {i32}, {0x41, 0x00, 0xd1, 0x0b}), "type mismatch");
  // (func $f (drop (ref.func $f))) -- undeclared
  EXPECT_EQ(body_verdict({}, {}, {0xd2, 0x00, 0x1a, 0x0b}), "undeclared function reference");
  ModuleBuilder b;
  b.func(b.type({}, {}), {0xd2, 0x00, 0x1a, 0x0b});
  b.export_("f", ExternKind::Func, 0);
  EXPECT_EQ(verdict(b.m), "ok");
  ModuleBuilder c;
  c.func(c.type({}, {}), {0xd2, 0x00, 0x1a, 0x0b});
  c.global(funcref, false, cexpr({op_index(Opcode::RefFunc, 0)}));
  EXPECT_EQ(verdict(c.m), "ok");
  EXPECT_EQ(body_verdict({}, {}, {0xd2, 0x03, 0x1a, 0x0b}), "unknown function 3");
}

TEST(FuncBody, BodyMustEndWithItsEnd) {
  // i32.const 1 drop, no end, at the end of the module
  EXPECT_EQ(body_verdict({}, {}, {0x41, 0x01, 0x1a}), "unexpected end");
  // ... and followed by another body
  ModuleBuilder b;
  uint32_t t = b.type({}, {});
  b.func(t, {0x41, 0x01, 0x1a});
  b.func(t, {0x0b});
  Status s = validate_module(b.m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "END opcode expected");
  EXPECT_EQ(s.error().offset, b.m.codes[0].body_end);
  // bytes after the function's final end
  EXPECT_EQ(body_verdict({}, {}, {0x0b, 0x01}), "section size mismatch");
  // an immediate cut off by the body's end
  EXPECT_EQ(body_verdict({}, {}, {0x41}), "unexpected end");
  // an opcode that does not exist
  EXPECT_EQ(body_verdict({}, {}, {0xff, 0x0b}), "illegal opcode");
}

TEST(FuncBody, DeepNestingIsLinear) {
  // 100000 nested blocks then as many ends: quadratic work would show here.
  constexpr int kDepth = 100000;
  std::vector<uint8_t> code;
  for (int i = 0; i < kDepth; ++i) code.insert(code.end(), {0x02, 0x40});
  for (int i = 0; i < kDepth; ++i) code.push_back(0x0b);
  code.push_back(0x0b);
  EXPECT_EQ(body_verdict({}, {}, code), "ok");
  code.pop_back();
  EXPECT_EQ(body_verdict({}, {}, code), "unexpected end");
}

TEST(FuncBody, MalformedBodyOutranksEarlierInvalidBody) {
  // The spec decodes everything before validating: body 1's illegal opcode
  // is reported although body 0 has a type error.
  ModuleBuilder b;
  uint32_t t = b.type({}, {});
  b.func(t, {0x41, 0x00, 0x0b});  // leftover i32: type mismatch
  EXPECT_EQ(verdict(b.m), "type mismatch");
  b.func(t, {0xff, 0x0b});
  EXPECT_EQ(verdict(b.m), "illegal opcode");
  // a module-level error is outranked too
  b.m.exports.resize(2);
  b.m.exports[0].name = b.m.exports[1].name = "x";
  EXPECT_EQ(verdict(b.m), "illegal opcode");
}

}  // namespace
}  // namespace ww::testing
