// Module-level validation: limits, constant expressions, exports, start,
// segments.
#include <gtest/gtest.h>

#include "test_helpers.h"

namespace ww::testing {
namespace {

TEST(Module, EmptyModuleIsValid) { EXPECT_EQ(verdict(Module{}), "ok"); }

TEST(Module, MemoryLimits) {
  ModuleBuilder b;
  b.memory(1, 65536);
  EXPECT_EQ(verdict(b.m), "ok");
  b.m.memories[0].limits.min = 65537;
  b.m.memories[0].limits.max.reset();
  EXPECT_EQ(verdict(b.m), "memory size must be at most 65536 pages (4GiB)");
  b.m.memories[0].limits = Limits{0, 65537};
  EXPECT_EQ(verdict(b.m), "memory size must be at most 65536 pages (4GiB)");
  b.m.memories[0].limits = Limits{2, 1};
  EXPECT_EQ(verdict(b.m), "size minimum must not be greater than maximum");
}

TEST(Module, MultipleMemories) {
  ModuleBuilder b;
  b.memory(1);
  b.memory(1);
  EXPECT_EQ(verdict(b.m), "multiple memories");
  // an imported memory counts too
  ModuleBuilder c;
  Import im;
  im.kind = ExternKind::Memory;
  c.m.imports.push_back(im);
  c.m.num_imported_memories = 1;
  c.memory(0);
  EXPECT_EQ(verdict(c.m), "multiple memories");
}

TEST(Module, TableLimits) {
  ModuleBuilder b;
  b.table(funcref, 10, 5);
  EXPECT_EQ(verdict(b.m), "size minimum must not be greater than maximum");
  b.m.tables[0].limits = Limits{0xFFFFFFFFull, std::nullopt};
  EXPECT_EQ(verdict(b.m), "ok");
}

TEST(Module, ImportedFunctionTypeMustExist) {
  ModuleBuilder b;
  b.import_func(3);
  EXPECT_EQ(verdict(b.m), "unknown type 3");
}

TEST(Module, DefinedFunctionTypeMustExist) {
  ModuleBuilder b;
  b.func(2, {0x0b});
  EXPECT_EQ(verdict(b.m), "unknown type 2");
}

TEST(Module, GlobalInitializers) {
  auto one = [](ValType t, ConstExpr e) {
    ModuleBuilder b;
    b.global(t, false, std::move(e));
    return verdict(b.m);
  };
  EXPECT_EQ(one(i32, cexpr({op_i32(1)})), "ok");
  EXPECT_EQ(one(i32, cexpr({op_i64(1)})), "type mismatch");
  EXPECT_EQ(one(i32, cexpr({})), "type mismatch");
  EXPECT_EQ(one(i32, cexpr({op_i32(1), op_i32(2)})), "type mismatch");
  EXPECT_EQ(one(i32, cexpr({op_index(Opcode::I32Ctz, 0)})), "constant expression required");
  EXPECT_EQ(one(i32, cexpr({op_i32(1), op_i32(2), op_index(Opcode::I32DivS, 0)})), "constant expression required");
  EXPECT_EQ(one(externref, cexpr({op_ref_null(externref)})), "ok");
  EXPECT_EQ(one(externref, cexpr({op_ref_null(funcref)})), "type mismatch");
  EXPECT_EQ(one(funcref, cexpr({op_index(Opcode::RefFunc, 7)})), "unknown function 7");
  EXPECT_EQ(one(i32, cexpr({op_index(Opcode::GlobalGet, 0)})), "unknown global 0");
}

TEST(Module, GlobalGetInConstantExpressions) {
  ModuleBuilder b;
  b.import_global(i32, false);
  b.import_global(i32, true);
  b.global(i32, false, cexpr({op_index(Opcode::GlobalGet, 0)}));
  EXPECT_EQ(verdict(b.m), "ok");
  // a mutable import is not constant
  b.global(i32, false, cexpr({op_index(Opcode::GlobalGet, 1)}));
  EXPECT_EQ(verdict(b.m), "constant expression required");
  b.m.globals.pop_back();
  // A global's initialiser sees the globals defined before it (3.0), not
  // itself nor those after it.
  b.global(i32, false, cexpr({op_index(Opcode::GlobalGet, 2)}));
  EXPECT_EQ(verdict(b.m), "ok");
  b.global(i32, false, cexpr({op_index(Opcode::GlobalGet, 4)}));
  EXPECT_EQ(verdict(b.m), "unknown global 4");
  b.m.globals.back().init = cexpr({op_index(Opcode::GlobalGet, 5)});
  b.global(i32, false, cexpr({op_i32(0)}));
  EXPECT_EQ(verdict(b.m), "unknown global 5");
  b.m.globals[2].init = cexpr({op_i32(7)});
  // Segments see every global, defined ones included.
  b.memory(1);
  b.m.datas.push_back(DataSegment{});
  b.m.datas.back().mode = SegmentMode::Active;
  b.m.datas.back().offset = cexpr({op_index(Opcode::GlobalGet, 5)});
  EXPECT_EQ(verdict(b.m), "ok");
}

// Extended constant expressions (3.0): i32/i64 add, sub and mul over
// constants and immutable globals, their operands' types checked.
TEST(Module, ExtendedConstantExpressions) {
  auto one = [](ValType t, ConstExpr e) {
    ModuleBuilder b;
    b.import_global(i64, false);
    b.global(t, false, std::move(e));
    return verdict(b.m);
  };
  EXPECT_EQ(one(i32, cexpr({op_i32(1), op_i32(2), op_index(Opcode::I32Add, 0)})), "ok");
  EXPECT_EQ(
      one(i32, cexpr({op_i32(1), op_i32(2), op_index(Opcode::I32Sub, 0), op_i32(3), op_index(Opcode::I32Mul, 0)})),
      "ok");
  EXPECT_EQ(one(i64, cexpr({op_index(Opcode::GlobalGet, 0), op_i64(2), op_index(Opcode::I64Mul, 0)})), "ok");
  EXPECT_EQ(one(i64, cexpr({op_index(Opcode::GlobalGet, 0), op_i32(2), op_index(Opcode::I64Add, 0)})), "type mismatch");
  EXPECT_EQ(one(i32, cexpr({op_i64(1), op_i64(2), op_index(Opcode::I64Add, 0)})), "type mismatch");
  EXPECT_EQ(one(i32, cexpr({op_i32(1), op_index(Opcode::I32Add, 0)})), "type mismatch");
  EXPECT_EQ(one(i32, cexpr({op_i32(1), op_i32(2), op_i32(3), op_index(Opcode::I32Add, 0)})), "type mismatch");
}

TEST(Module, Exports) {
  ModuleBuilder b;
  b.func(b.type({}, {}), {0x0b});
  b.memory(1);
  b.export_("a", ExternKind::Func, 0);
  b.export_("b", ExternKind::Memory, 0);
  EXPECT_EQ(verdict(b.m), "ok");
  ModuleBuilder dup = b;
  dup.export_("a", ExternKind::Memory, 0);
  EXPECT_EQ(verdict(dup.m), "duplicate export name");
  ModuleBuilder f = b;
  f.export_("c", ExternKind::Func, 1);
  EXPECT_EQ(verdict(f.m), "unknown function 1");
  ModuleBuilder t = b;
  t.export_("c", ExternKind::Table, 0);
  EXPECT_EQ(verdict(t.m), "unknown table 0");
  ModuleBuilder g = b;
  g.export_("c", ExternKind::Global, 0);
  EXPECT_EQ(verdict(g.m), "unknown global 0");
  ModuleBuilder m = b;
  m.export_("c", ExternKind::Memory, 1);
  EXPECT_EQ(verdict(m.m), "unknown memory 1");
}

TEST(Module, StartFunction) {
  ModuleBuilder b;
  b.func(b.type({}, {}), {0x0b});
  b.func(b.type({i32}, {}), {0x0b});
  b.func(b.type({}, {i32}), {0x41, 0x00, 0x0b});
  b.m.start = 0;
  EXPECT_EQ(verdict(b.m), "ok");
  b.m.start = 1;
  EXPECT_EQ(verdict(b.m), "start function");
  b.m.start = 2;
  EXPECT_EQ(verdict(b.m), "start function");
  b.m.start = 3;
  EXPECT_EQ(verdict(b.m), "unknown function 3");
}

TEST(Module, ElementSegments) {
  ModuleBuilder b;
  b.func(b.type({}, {}), {0x0b});
  b.table(funcref, 1);
  ElemSegment s;
  s.mode = SegmentMode::Active;
  s.table = 0;
  s.offset = cexpr({op_i32(0)});
  s.type = funcref;
  s.init.push_back(cexpr({op_index(Opcode::RefFunc, 0)}));
  b.m.elems.push_back(s);
  EXPECT_EQ(verdict(b.m), "ok");

  ModuleBuilder off = b;
  off.m.elems[0].offset = cexpr({op_i64(0)});
  EXPECT_EQ(verdict(off.m), "type mismatch");
  ModuleBuilder tab = b;
  tab.m.elems[0].table = 1;
  EXPECT_EQ(verdict(tab.m), "unknown table 1");
  ModuleBuilder ty = b;
  ty.m.tables[0].elem = externref;
  EXPECT_EQ(verdict(ty.m), "type mismatch");
  ModuleBuilder init = b;
  init.m.elems[0].init.push_back(cexpr({op_ref_null(externref)}));
  EXPECT_EQ(verdict(init.m), "type mismatch");
  ModuleBuilder fn = b;
  fn.m.elems[0].init.push_back(cexpr({op_index(Opcode::RefFunc, 5)}));
  EXPECT_EQ(verdict(fn.m), "unknown function 5");
  // a declarative segment declares the reference for function bodies
  ModuleBuilder decl;
  decl.func(decl.type({}, {}), {0xd2, 0x00, 0x1a, 0x0b});
  EXPECT_EQ(verdict(decl.m), "undeclared function reference");
  ElemSegment d;
  d.mode = SegmentMode::Declarative;
  d.init.push_back(cexpr({op_index(Opcode::RefFunc, 0)}));
  decl.m.elems.push_back(d);
  EXPECT_EQ(verdict(decl.m), "ok");
}

TEST(Module, DataSegments) {
  ModuleBuilder b;
  DataSegment d;
  d.mode = SegmentMode::Active;
  d.memory = 0;
  d.offset = cexpr({op_i32(0)});
  b.m.datas.push_back(d);
  EXPECT_EQ(verdict(b.m), "unknown memory 0");
  b.memory(1);
  EXPECT_EQ(verdict(b.m), "ok");
  b.m.datas[0].memory = 1;
  EXPECT_EQ(verdict(b.m), "unknown memory 1");
  b.m.datas[0].memory = 0;
  b.m.datas[0].offset = cexpr({op_index(Opcode::GlobalGet, 0)});
  EXPECT_EQ(verdict(b.m), "unknown global 0");
  // passive segments need no memory
  ModuleBuilder p;
  d.mode = SegmentMode::Passive;
  p.m.datas.push_back(d);
  EXPECT_EQ(verdict(p.m), "ok");
}

}  // namespace
}  // namespace ww::testing
