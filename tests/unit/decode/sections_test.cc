// Well-formed modules: every section kind, every element and data segment
// form, the name section.
#include <gtest/gtest.h>

#include "decode_test_util.h"

namespace ww::test {
namespace {

TEST(DecodeSections, EmptyModule) {
  // (module)
  Module m = decode_ok(wasm({}));
  EXPECT_TRUE(m.types.empty());
  EXPECT_TRUE(m.funcs.empty());
  EXPECT_FALSE(m.start.has_value());
  EXPECT_FALSE(m.data_count.has_value());
  EXPECT_EQ(m.bytes.size(), 8u);
}

TEST(DecodeSections, TypeSection) {
  // (type (func (param i32 i64) (result f32)))
  // (type (func))
  // (type (func (param funcref externref f64)))
  Module m = decode_ok(wasm(
      {section(1, {0x03, 0x60, 0x02, 0x7f, 0x7e, 0x01, 0x7d, 0x60, 0x00, 0x00, 0x60, 0x03, 0x70, 0x6f, 0x7c, 0x00})}));
  ASSERT_EQ(m.types.size(), 3u);
  EXPECT_EQ(m.types[0].params, (std::vector<ValType>{ValType::I32, ValType::I64}));
  EXPECT_EQ(m.types[0].results, (std::vector<ValType>{ValType::F32}));
  EXPECT_TRUE(m.types[1].params.empty());
  EXPECT_TRUE(m.types[1].results.empty());
  EXPECT_EQ(m.types[2].params, (std::vector<ValType>{ValType::FuncRef, ValType::ExternRef, ValType::F64}));
}

TEST(DecodeSections, ImportsOfEveryKind) {
  // (type (func (param i32)))
  // (import "m" "f" (func (type 0)))
  // (import "m" "t" (table 1 2 externref))
  // (import "m" "mem" (memory 1))
  // (import "m" "g" (global (mut i64)))
  // (func (type 0))   ;; defined function 1
  Bytes b = wasm({section(1, {0x01, 0x60, 0x01, 0x7f, 0x00}),
                  section(2, cat({{0x04},
                                  str("m"),
                                  str("f"),
                                  {0x00, 0x00},
                                  str("m"),
                                  str("t"),
                                  {0x01, 0x6f, 0x01, 0x01, 0x02},
                                  str("m"),
                                  str("mem"),
                                  {0x02, 0x00, 0x01},
                                  str("m"),
                                  str("g"),
                                  {0x03, 0x7e, 0x01}})),
                  section(3, {0x01, 0x00}), section(10, {0x01, 0x02, 0x00, 0x0b})});
  Module m = decode_ok(b);
  ASSERT_EQ(m.imports.size(), 4u);
  EXPECT_EQ(m.imports[0].module, "m");
  EXPECT_EQ(m.imports[0].field, "f");
  EXPECT_EQ(m.imports[0].kind, ExternKind::Func);
  EXPECT_EQ(m.imports[0].offset, 18u);  // module name's length byte
  EXPECT_EQ(m.imports[1].kind, ExternKind::Table);
  EXPECT_EQ(m.imports[1].table.elem, ValType::ExternRef);
  EXPECT_EQ(m.imports[1].table.limits.min, 1u);
  EXPECT_EQ(m.imports[1].table.limits.max, std::optional<uint64_t>(2));
  EXPECT_EQ(m.imports[2].field, "mem");
  EXPECT_EQ(m.imports[2].kind, ExternKind::Memory);
  EXPECT_EQ(m.imports[2].memory.limits.min, 1u);
  EXPECT_FALSE(m.imports[2].memory.limits.max.has_value());
  EXPECT_EQ(m.imports[3].kind, ExternKind::Global);
  EXPECT_EQ(m.imports[3].global.type, ValType::I64);
  EXPECT_TRUE(m.imports[3].global.mut);

  EXPECT_EQ(m.num_imported_funcs, 1u);
  EXPECT_EQ(m.num_imported_tables, 1u);
  EXPECT_EQ(m.num_imported_memories, 1u);
  EXPECT_EQ(m.num_imported_globals, 1u);
  EXPECT_EQ(m.num_funcs(), 2u);
  EXPECT_EQ(m.func_type_index(0), 0u);
  EXPECT_EQ(m.func_type_index(1), 0u);
  EXPECT_EQ(m.table_type(0).elem, ValType::ExternRef);
  EXPECT_EQ(m.memory_type(0).limits.min, 1u);
  EXPECT_EQ(m.global_type(0).type, ValType::I64);
  EXPECT_EQ(&m.import_of(ExternKind::Global, 0), &m.imports[3]);
}

TEST(DecodeSections, FunctionBodyLocalsAndOffsets) {
  // (type (func (param i32)))
  // (func (type 0) (local i32 i32) (local i64) local.get 0 drop)
  Bytes b = wasm({section(1, {0x01, 0x60, 0x01, 0x7f, 0x00}),  // bytes 8..14
                  section(3, {0x01, 0x00}),                    // bytes 15..18
                  // code section at 19; body size at 22; locals at 23..27;
                  // instructions 28..31
                  section(10, {0x01, 0x09, 0x02, 0x02, 0x7f, 0x01, 0x7e, 0x20, 0x00, 0x1a, 0x0b})});
  Module m = decode_ok(b);
  ASSERT_EQ(m.codes.size(), 1u);
  const FunctionBody& f = m.codes[0];
  EXPECT_EQ(f.locals, (std::vector<ValType>{ValType::I32, ValType::I32, ValType::I64}));
  EXPECT_EQ(f.size_offset, 22u);
  EXPECT_EQ(f.body_offset, 28u);
  EXPECT_EQ(f.body_end, 32u);
  EXPECT_EQ(m.bytes[f.body_offset], 0x20);  // local.get
  EXPECT_EQ(m.bytes[f.body_end - 1], 0x0b);
  EXPECT_EQ(m.code_section_size, 11u);
  EXPECT_EQ(m.func_display_name(0), "func[0]");
}

TEST(DecodeSections, LocalGroupOfZeroIsAllowed) {
  // (func (local) (local f32 f32)) with an explicit zero-count i32 group
  Bytes b = wasm({section(1, {0x01, 0x60, 0x00, 0x00}), section(3, {0x01, 0x00}),
                  section(10, {0x01, 0x06, 0x02, 0x00, 0x7f, 0x02, 0x7d, 0x0b})});
  Module m = decode_ok(b);
  ASSERT_EQ(m.codes.size(), 1u);
  EXPECT_EQ(m.codes[0].locals, (std::vector<ValType>{ValType::F32, ValType::F32}));
}

TEST(DecodeSections, TableMemoryGlobalExportStart) {
  // (type (func))
  // (func $f)
  // (table 1 funcref)
  // (memory 1 2)
  // (global (mut i32) (i32.const 42))
  // (export "f" (func 0)) (export "m" (memory 0))
  // (start 0)
  Bytes b = wasm({section(1, {0x01, 0x60, 0x00, 0x00}), section(3, {0x01, 0x00}), section(4, {0x01, 0x70, 0x00, 0x01}),
                  section(5, {0x01, 0x01, 0x01, 0x02}), section(6, {0x01, 0x7f, 0x01, 0x41, 0x2a, 0x0b}),
                  section(7, cat({{0x02}, str("f"), {0x00, 0x00}, str("m"), {0x02, 0x00}})), section(8, {0x00}),
                  section(10, {0x01, 0x02, 0x00, 0x0b})});
  Module m = decode_ok(b);
  ASSERT_EQ(m.tables.size(), 1u);
  EXPECT_EQ(m.tables[0].elem, ValType::FuncRef);
  EXPECT_EQ(m.tables[0].limits.min, 1u);
  EXPECT_FALSE(m.tables[0].limits.max.has_value());
  ASSERT_EQ(m.memories.size(), 1u);
  EXPECT_EQ(m.memories[0].limits.min, 1u);
  EXPECT_EQ(m.memories[0].limits.max, std::optional<uint64_t>(2));
  ASSERT_EQ(m.globals.size(), 1u);
  EXPECT_EQ(m.globals[0].type.type, ValType::I32);
  EXPECT_TRUE(m.globals[0].type.mut);
  ASSERT_EQ(m.globals[0].init.instrs.size(), 1u);
  EXPECT_EQ(m.globals[0].init.instrs[0].op, Opcode::I32Const);
  EXPECT_EQ(m.globals[0].init.instrs[0].imm, 42u);
  ASSERT_EQ(m.exports.size(), 2u);
  EXPECT_EQ(m.exports[0].name, "f");
  EXPECT_EQ(m.exports[0].kind, ExternKind::Func);
  EXPECT_EQ(m.exports[1].name, "m");
  EXPECT_EQ(m.exports[1].kind, ExternKind::Memory);
  EXPECT_EQ(m.start, std::optional<uint32_t>(0));
  EXPECT_EQ(m.func_display_name(0), "f");  // no name section: the export name
}

TEST(DecodeSections, AllEightElementSegmentForms) {
  // (type (func)) (func) (table 10 funcref)
  // (elem (i32.const 1) func 0)                               ;; form 0
  // (elem func 0)                                             ;; form 1
  // (elem (table 0) (i32.const 2) func 0)                     ;; form 2
  // (elem declare func 0)                                     ;; form 3
  // (elem (i32.const 3) funcref (ref.func 0))                 ;; form 4
  // (elem externref (ref.null extern))                        ;; form 5
  // (elem (table 0) (i32.const 4) funcref (ref.null func))    ;; form 6
  // (elem declare funcref (ref.func 0))                       ;; form 7
  Bytes elems = {0x08, 0x00, 0x41, 0x01, 0x0b, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x02, 0x00, 0x41,
                 0x02, 0x0b, 0x00, 0x01, 0x00, 0x03, 0x00, 0x01, 0x00, 0x04, 0x41, 0x03, 0x0b, 0x01,
                 0xd2, 0x00, 0x0b, 0x05, 0x6f, 0x01, 0xd0, 0x6f, 0x0b, 0x06, 0x00, 0x41, 0x04, 0x0b,
                 0x70, 0x01, 0xd0, 0x70, 0x0b, 0x07, 0x70, 0x01, 0xd2, 0x00, 0x0b};
  Bytes b = wasm({section(1, {0x01, 0x60, 0x00, 0x00}), section(3, {0x01, 0x00}), section(4, {0x01, 0x70, 0x00, 0x0a}),
                  section(9, elems), section(10, {0x01, 0x02, 0x00, 0x0b})});
  Module m = decode_ok(b);
  ASSERT_EQ(m.elems.size(), 8u);
  const SegmentMode A = SegmentMode::Active, P = SegmentMode::Passive, D = SegmentMode::Declarative;
  const SegmentMode modes[8] = {A, P, A, D, A, P, A, D};
  const ValType F = ValType::FuncRef, E = ValType::ExternRef;
  const ValType types[8] = {F, F, F, F, F, E, F, F};
  const Opcode init_op[8] = {Opcode::RefFunc, Opcode::RefFunc, Opcode::RefFunc, Opcode::RefFunc,
                             Opcode::RefFunc, Opcode::RefNull, Opcode::RefNull, Opcode::RefFunc};
  for (int i = 0; i < 8; ++i) {
    SCOPED_TRACE("form " + std::to_string(i));
    const ElemSegment& s = m.elems[i];
    EXPECT_EQ(s.mode, modes[i]);
    EXPECT_EQ(s.type, types[i]);
    ASSERT_EQ(s.init.size(), 1u);
    ASSERT_EQ(s.init[0].instrs.size(), 1u);
    EXPECT_EQ(s.init[0].instrs[0].op, init_op[i]);
    if (init_op[i] == Opcode::RefFunc) {
      EXPECT_EQ(s.init[0].instrs[0].a, 0u);
    }
    if (s.mode == SegmentMode::Active) {
      EXPECT_EQ(s.table, 0u);
      ASSERT_EQ(s.offset.instrs.size(), 1u);
      EXPECT_EQ(s.offset.instrs[0].op, Opcode::I32Const);
    }
  }
  EXPECT_EQ(m.elems[0].offset.instrs[0].imm, 1u);
  EXPECT_EQ(m.elems[2].offset.instrs[0].imm, 2u);
  EXPECT_EQ(m.elems[4].offset.instrs[0].imm, 3u);
  EXPECT_EQ(m.elems[6].offset.instrs[0].imm, 4u);
  EXPECT_EQ(m.elems[5].init[0].instrs[0].ref_type, ValType::ExternRef);
  // Elem section id at 24, size 25, count 26, form 0's flags at 27, its
  // offset expression 28..30, vector length 31, funcidx 32.
  EXPECT_EQ(m.elems[0].offset_in_module, 27u);
  EXPECT_EQ(m.elems[0].offset.offset, 28u);
  EXPECT_EQ(m.elems[0].init[0].offset, 32u);
  EXPECT_EQ(m.elems[0].init[0].instrs[0].offset, 32u);
}

TEST(DecodeSections, ElemTableIndexCanBeNonZero) {
  // (elem (table 3) (i32.const 0) func 7 8)  ;; form 2, indices unchecked here
  Module m = decode_ok(wasm({section(9, {0x01, 0x02, 0x03, 0x41, 0x00, 0x0b, 0x00, 0x02, 0x07, 0x08})}));
  ASSERT_EQ(m.elems.size(), 1u);
  EXPECT_EQ(m.elems[0].table, 3u);
  ASSERT_EQ(m.elems[0].init.size(), 2u);
  EXPECT_EQ(m.elems[0].init[1].instrs[0].a, 8u);
}

TEST(DecodeSections, AllThreeDataSegmentFormsWithDataCount) {
  // (memory 1)
  // (data (i32.const 8) "hi")               ;; form 0
  // (data "abc")                            ;; form 1 (passive)
  // (data (memory 0) (i32.const 16) "z")    ;; form 2
  Bytes b = wasm({section(5, {0x01, 0x00, 0x01}), section(12, {0x03}),
                  section(11, cat({{0x03, 0x00, 0x41, 0x08, 0x0b},
                                   str("hi"),
                                   {0x01},
                                   str("abc"),
                                   {0x02, 0x00, 0x41, 0x10, 0x0b},
                                   str("z")}))});
  Module m = decode_ok(b);
  EXPECT_EQ(m.data_count, std::optional<uint32_t>(3));
  ASSERT_EQ(m.datas.size(), 3u);
  auto text = [&](const DataSegment& d) {
    return std::string(reinterpret_cast<const char*>(m.bytes.data()) + d.bytes_offset, d.size);
  };
  EXPECT_EQ(m.datas[0].mode, SegmentMode::Active);
  EXPECT_EQ(m.datas[0].memory, 0u);
  EXPECT_EQ(m.datas[0].offset.instrs[0].imm, 8u);
  EXPECT_EQ(text(m.datas[0]), "hi");
  EXPECT_EQ(m.datas[1].mode, SegmentMode::Passive);
  EXPECT_TRUE(m.datas[1].offset.instrs.empty());
  EXPECT_EQ(text(m.datas[1]), "abc");
  EXPECT_EQ(m.datas[2].mode, SegmentMode::Active);
  EXPECT_EQ(m.datas[2].offset.instrs[0].imm, 16u);
  EXPECT_EQ(text(m.datas[2]), "z");
}

TEST(DecodeSections, DataCountBetweenElemAndCode) {
  // (type (func)) (func) (elem declare func 0) datacount 0 (code)
  Bytes b =
      wasm({section(1, {0x01, 0x60, 0x00, 0x00}), section(3, {0x01, 0x00}), section(9, {0x01, 0x03, 0x00, 0x01, 0x00}),
            section(12, {0x00}), section(10, {0x01, 0x02, 0x00, 0x0b})});
  Module m = decode_ok(b);
  EXPECT_EQ(m.data_count, std::optional<uint32_t>(0));
  EXPECT_EQ(m.codes.size(), 1u);
}

TEST(DecodeSections, CustomSectionsAnywhere) {
  // custom sections before, between and after the known ones
  Bytes custom = cat({str("x"), {0x01, 0x02, 0x03}});
  Bytes b =
      wasm({section(0, custom), section(1, {0x01, 0x60, 0x00, 0x00}), section(0, custom), section(3, {0x01, 0x00}),
            section(0, custom), section(10, {0x01, 0x02, 0x00, 0x0b}), section(0, custom)});
  Module m = decode_ok(b);
  EXPECT_EQ(m.types.size(), 1u);
  EXPECT_EQ(m.codes.size(), 1u);
}

// (module $M (func $main) (func) (export "second" (func 1)))
Bytes named_module(const Bytes& name_payload) {
  return wasm({section(1, {0x01, 0x60, 0x00, 0x00}), section(3, {0x02, 0x00, 0x00}),
               section(7, cat({{0x01}, str("second"), {0x00, 0x01}})),
               section(10, {0x02, 0x02, 0x00, 0x0b, 0x02, 0x00, 0x0b}), section(0, cat({str("name"), name_payload}))});
}

TEST(DecodeSections, NameSection) {
  // subsection 0: module name "M"; subsection 1: function 0 is "main";
  // subsection 2 (local names) is skipped
  Bytes payload = {0x00, 0x02, 0x01, 'M', 0x01, 0x07, 0x01, 0x00, 0x04, 'm', 'a', 'i', 'n', 0x02, 0x02, 0x00, 0x00};
  Module m = decode_ok(named_module(payload));
  EXPECT_EQ(m.module_name, "M");
  ASSERT_EQ(m.func_names.size(), 1u);
  EXPECT_EQ(m.func_names.at(0), "main");
  EXPECT_EQ(m.func_display_name(0), "main");
  EXPECT_EQ(m.func_display_name(1), "second");
  EXPECT_EQ(m.func_display_name(5), "func[5]");
}

TEST(DecodeSections, MalformedNameSectionIsIgnored) {
  // a well-formed module-name subsection followed by a function-names
  // subsection whose size runs past the section: the whole section is dropped
  Bytes payload = {0x00, 0x02, 0x01, 'M', 0x01, 0x30, 0x01, 0x00};
  Module m = decode_ok(named_module(payload));
  EXPECT_EQ(m.module_name, "");
  EXPECT_TRUE(m.func_names.empty());
  EXPECT_EQ(m.func_display_name(0), "func[0]");
}

TEST(DecodeSections, NameSectionWithBadUtf8IsIgnored) {
  Bytes payload = {0x00, 0x02, 0x01, 0xff};
  Module m = decode_ok(named_module(payload));
  EXPECT_EQ(m.module_name, "");
}

TEST(DecodeSections, NonMinimalLebLengthsAreAccepted) {
  // (memory 2) with the minimum as a 5-byte LEB, and a section size as a
  // 2-byte LEB
  Module m = decode_ok(wasm({{0x05, 0x87, 0x00, 0x01, 0x00, 0x82, 0x80, 0x80, 0x80, 0x00}}));
  ASSERT_EQ(m.memories.size(), 1u);
  EXPECT_EQ(m.memories[0].limits.min, 2u);
}

}  // namespace
}  // namespace ww::test
