// Builds decoded-module IR by hand, so validator tests do not depend on the
// decoder: each function body is raw instruction bytes appended to
// Module::bytes.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "decode/module.h"
#include "validate/validator.h"

namespace ww::testing {

constexpr ValType i32 = ValType::I32, i64 = ValType::I64, f32 = ValType::F32, f64 = ValType::F64,
                  funcref = ValType::FuncRef, externref = ValType::ExternRef;

struct ModuleBuilder {
  Module m;

  uint32_t type(std::vector<ValType> params, std::vector<ValType> results) {
    m.types.push_back(FuncType{std::move(params), std::move(results)});
    return uint32_t(m.types.size() - 1);
  }

  // Adds a defined function whose body is `code` (which must include the
  // final `end` byte); returns the module offset of the body's first byte.
  uint32_t func(uint32_t type_index, std::vector<uint8_t> code, std::vector<ValType> locals = {}) {
    FunctionBody b;
    b.locals = std::move(locals);
    b.size_offset = m.bytes.size();
    m.bytes.push_back(0);  // stands in for the size field, so offsets differ from 0
    b.body_offset = uint32_t(m.bytes.size());
    m.bytes.insert(m.bytes.end(), code.begin(), code.end());
    b.body_end = uint32_t(m.bytes.size());
    m.funcs.push_back(type_index);
    m.codes.push_back(b);
    return b.body_offset;
  }

  void import_func(uint32_t type_index) {
    Import im;
    im.module = "m";
    im.field = "f" + std::to_string(m.imports.size());
    im.kind = ExternKind::Func;
    im.func_type = type_index;
    m.imports.push_back(im);
    m.num_imported_funcs++;
  }

  void import_global(ValType t, bool mut) {
    Import im;
    im.module = "m";
    im.field = "g" + std::to_string(m.imports.size());
    im.kind = ExternKind::Global;
    im.global = GlobalType{t, mut};
    m.imports.push_back(im);
    m.num_imported_globals++;
  }

  void memory(uint64_t min, std::optional<uint64_t> max = std::nullopt) {
    MemoryType t;
    t.limits.min = min;
    t.limits.max = max;
    m.memories.push_back(t);
  }

  void table(ValType elem, uint64_t min, std::optional<uint64_t> max = std::nullopt) {
    TableType t;
    t.elem = elem;
    t.limits.min = min;
    t.limits.max = max;
    m.tables.push_back(t);
  }

  void global(ValType t, bool mut, ConstExpr init) { m.globals.push_back(Global{GlobalType{t, mut}, std::move(init)}); }

  void export_(std::string name, ExternKind kind, uint32_t index) {
    Export e;
    e.name = std::move(name);
    e.kind = kind;
    e.index = index;
    m.exports.push_back(e);
  }
};

// Constant-expression instructions.
inline Instr op_i32(int32_t v) {
  Instr in;
  in.op = Opcode::I32Const;
  in.imm = uint64_t(int64_t(v));
  return in;
}
inline Instr op_i64(int64_t v) {
  Instr in;
  in.op = Opcode::I64Const;
  in.imm = uint64_t(v);
  return in;
}
inline Instr op_index(Opcode op, uint32_t index) {
  Instr in;
  in.op = op;
  in.a = index;
  return in;
}
inline Instr op_ref_null(ValType t) {
  Instr in;
  in.op = Opcode::RefNull;
  in.ref_type = t;
  return in;
}
inline ConstExpr cexpr(std::vector<Instr> instrs) {
  ConstExpr e;
  e.instrs = std::move(instrs);
  return e;
}

// The failure message, or "ok".
inline std::string verdict(const Module& m) {
  Status s = validate_module(m);
  return s.ok() ? "ok" : s.error().message;
}

}  // namespace ww::testing
