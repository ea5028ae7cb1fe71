// Module-level validation: index spaces, limits, constant expressions,
// exports, start, segments; function bodies are checked by FuncValidator.
#include "validate/validator.h"

#include <string_view>
#include <unordered_set>

#include "validate/context.h"

namespace ww {

namespace {

using validate::Context;
using validate::indexed_error;

constexpr uint64_t kMaxTableSize = 0xFFFFFFFFull;

Status check_limits(const Limits& l, uint64_t bound, const char* range_msg, uint64_t offset) {
  if (l.min > bound) return make_error(offset, range_msg);
  if (l.max && *l.max > bound) return make_error(offset, range_msg);
  if (l.max && l.min > *l.max) return make_error(offset, "size minimum must not be greater than maximum");
  return Status::Ok();
}

Status check_table_type(const TableType& t, uint64_t offset) {
  return check_limits(t.limits, kMaxTableSize, "table size must be at most 2^32-1", offset);
}

Status check_memory_type(const MemoryType& t, uint64_t offset) {
  return check_limits(t.limits, kMaxPages, "memory size must be at most 65536 pages (4GiB)", offset);
}

// Marks the functions a constant expression names with ref.func, so bodies
// may reference them (the spec's C.refs). Out-of-range indices are left for
// check_const_expr to report.
void collect_refs(const ConstExpr& e, Context& c) {
  for (const Instr& in : e.instrs) {
    if (in.op == Opcode::RefFunc && in.a < c.declared_refs.size()) c.declared_refs[in.a] = 1;
  }
}

// A constant expression of WebAssembly 3.0 (its GC instructions aside):
// t.const, ref.null, ref.func, global.get of an immutable global, and the
// extended constants i32/i64 add, sub and mul, leaving exactly one value of
// type `expect`. A global's initialiser sees the imported globals and the
// globals defined before it (`visible_globals`); segments see them all.
Status check_const_expr(const Context& c, const ConstExpr& e, ValType expect, size_t visible_globals) {
  // Const-ness first, for every instruction, then the types, as the
  // reference interpreter checks them.
  for (const Instr& in : e.instrs) {
    switch (in.op) {
      case Opcode::I32Const:
      case Opcode::I64Const:
      case Opcode::F32Const:
      case Opcode::F64Const:
      case Opcode::V128Const:
      case Opcode::RefNull:
      case Opcode::I32Add:
      case Opcode::I32Sub:
      case Opcode::I32Mul:
      case Opcode::I64Add:
      case Opcode::I64Sub:
      case Opcode::I64Mul: break;
      case Opcode::RefFunc:
        if (in.a >= c.func_types.size()) return indexed_error(in.offset, "unknown function", in.a);
        break;
      case Opcode::GlobalGet:
        if (in.a >= visible_globals) return indexed_error(in.offset, "unknown global", in.a);
        if (c.globals[in.a].mut) return make_error(in.offset, "constant expression required");
        break;
      default: return make_error(in.offset, "constant expression required");
    }
  }
  std::vector<ValType> stack;
  for (const Instr& in : e.instrs) {
    switch (in.op) {
      case Opcode::I32Const: stack.push_back(ValType::I32); break;
      case Opcode::I64Const: stack.push_back(ValType::I64); break;
      case Opcode::F32Const: stack.push_back(ValType::F32); break;
      case Opcode::F64Const: stack.push_back(ValType::F64); break;
      case Opcode::V128Const: stack.push_back(ValType::V128); break;
      case Opcode::RefNull: stack.push_back(in.ref_type); break;
      case Opcode::RefFunc: stack.push_back(ValType::FuncRef); break;
      case Opcode::GlobalGet: stack.push_back(c.globals[in.a].type); break;
      default: {  // i32/i64 add, sub, mul
        const bool i32 = in.op == Opcode::I32Add || in.op == Opcode::I32Sub || in.op == Opcode::I32Mul;
        const ValType t = i32 ? ValType::I32 : ValType::I64;
        if (stack.size() < 2 || stack.back() != t || stack[stack.size() - 2] != t) {
          return make_error(in.offset, "type mismatch");
        }
        stack.pop_back();
        break;
      }
    }
  }
  if (stack.size() != 1 || stack[0] != expect) {
    uint64_t off = e.instrs.empty() ? e.offset : e.instrs.back().offset;
    return make_error(off, "type mismatch");
  }
  return Status::Ok();
}

Status check_index(uint32_t index, size_t count, const char* what, uint64_t offset) {
  if (index >= count) return indexed_error(offset, what, index);
  return Status::Ok();
}

Status build_context(Context& c) {
  const Module& m = c.m;
  for (const Import& im : m.imports) {
    switch (im.kind) {
      case ExternKind::Func:
        WW_TRY(check_index(im.func_type, m.types.size(), "unknown type", im.offset));
        c.func_types.push_back(im.func_type);
        break;
      case ExternKind::Table:
        WW_TRY(check_table_type(im.table, im.offset));
        c.tables.push_back(im.table);
        break;
      case ExternKind::Memory:
        WW_TRY(check_memory_type(im.memory, im.offset));
        c.memories.push_back(im.memory);
        break;
      case ExternKind::Global: c.globals.push_back(im.global); break;
    }
  }
  c.num_imported_globals = uint32_t(c.globals.size());
  if (m.funcs.size() != m.codes.size()) {
    return make_error(kNoOffset, "function and code section have inconsistent lengths");
  }
  for (size_t i = 0; i < m.funcs.size(); ++i) {
    WW_TRY(check_index(m.funcs[i], m.types.size(), "unknown type", m.codes[i].size_offset));
    c.func_types.push_back(m.funcs[i]);
  }
  for (const TableType& t : m.tables) {
    WW_TRY(check_table_type(t, kNoOffset));
    c.tables.push_back(t);
  }
  for (const MemoryType& t : m.memories) {
    WW_TRY(check_memory_type(t, kNoOffset));
    c.memories.push_back(t);
  }
  if (c.memories.size() > 1) return make_error(kNoOffset, "multiple memories");
  for (const Global& g : m.globals) c.globals.push_back(g.type);

  c.declared_refs.assign(c.func_types.size(), 0);
  for (const Global& g : m.globals) collect_refs(g.init, c);
  for (const ElemSegment& s : m.elems) {
    collect_refs(s.offset, c);
    for (const ConstExpr& e : s.init) collect_refs(e, c);
  }
  for (const DataSegment& d : m.datas) collect_refs(d.offset, c);
  for (const Export& ex : m.exports) {
    if (ex.kind == ExternKind::Func && ex.index < c.declared_refs.size()) c.declared_refs[ex.index] = 1;
  }
  return Status::Ok();
}

Status check_globals(const Context& c) {
  for (size_t i = 0; i < c.m.globals.size(); ++i) {
    WW_TRY(check_const_expr(c, c.m.globals[i].init, c.m.globals[i].type.type, c.num_imported_globals + i));
  }
  return Status::Ok();
}

Status check_exports(const Context& c) {
  std::unordered_set<std::string_view> names;
  names.reserve(c.m.exports.size());
  for (const Export& ex : c.m.exports) {
    switch (ex.kind) {
      case ExternKind::Func: WW_TRY(check_index(ex.index, c.func_types.size(), "unknown function", ex.offset)); break;
      case ExternKind::Table: WW_TRY(check_index(ex.index, c.tables.size(), "unknown table", ex.offset)); break;
      case ExternKind::Memory: WW_TRY(check_index(ex.index, c.memories.size(), "unknown memory", ex.offset)); break;
      case ExternKind::Global: WW_TRY(check_index(ex.index, c.globals.size(), "unknown global", ex.offset)); break;
    }
    if (!names.insert(ex.name).second) return make_error(ex.offset, "duplicate export name");
  }
  return Status::Ok();
}

Status check_start(const Context& c) {
  if (!c.m.start) return Status::Ok();
  uint32_t f = *c.m.start;
  WW_TRY(check_index(f, c.func_types.size(), "unknown function", kNoOffset));
  const FuncType& ft = c.m.types[c.func_types[f]];
  if (!ft.params.empty() || !ft.results.empty()) return make_error(kNoOffset, "start function");
  return Status::Ok();
}

Status check_elems(const Context& c) {
  for (const ElemSegment& s : c.m.elems) {
    if (s.mode == SegmentMode::Active) {
      WW_TRY(check_index(s.table, c.tables.size(), "unknown table", s.offset_in_module));
      if (c.tables[s.table].elem != s.type) return make_error(s.offset_in_module, "type mismatch");
      WW_TRY(check_const_expr(c, s.offset, ValType::I32, c.globals.size()));
    }
    for (const ConstExpr& e : s.init) WW_TRY(check_const_expr(c, e, s.type, c.globals.size()));
  }
  return Status::Ok();
}

Status check_datas(const Context& c) {
  for (const DataSegment& d : c.m.datas) {
    if (d.mode != SegmentMode::Active) continue;
    WW_TRY(check_index(d.memory, c.memories.size(), "unknown memory", d.offset_in_module));
    WW_TRY(check_const_expr(c, d.offset, ValType::I32, c.globals.size()));
  }
  return Status::Ok();
}

Status validate_all(const Context& c, validate::FuncValidator& fv, uint32_t* bodies_done) {
  WW_TRY(check_globals(c));
  WW_TRY(check_exports(c));
  WW_TRY(check_start(c));
  WW_TRY(check_elems(c));
  WW_TRY(check_datas(c));
  for (uint32_t i = 0; i < c.m.codes.size(); ++i) {
    WW_TRY(fv.validate(i));
    *bodies_done = i + 1;
  }
  return Status::Ok();
}

}  // namespace

Status validate_module(const Module& m) {
  Context c(m);
  validate::FuncValidator fv(c);
  uint32_t bodies_done = 0;
  Status s = build_context(c);
  if (s.ok()) s = validate_all(c, fv, &bodies_done);
  if (s.ok()) return s;
  // The spec decodes the whole module before validating any of it, so a
  // malformed body later on outranks the validation error found first.
  // Bodies are only read here, hence this extra pass, paid on failure only.
  for (uint32_t i = bodies_done; i < m.codes.size(); ++i) WW_TRY(fv.check_syntax(i));
  return s;
}

}  // namespace ww
