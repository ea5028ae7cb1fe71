// Function-body validation: the operand-stack / control-stack algorithm of
// the spec's validation appendix, one pass over the body, no allocation per
// instruction once the stacks have grown.
#include "validate/context.h"

#include "wasm/instr_reader.h"

namespace ww::validate {

namespace {

// The type of a value popped from the polymorphic stack of unreachable code:
// it matches every type. 0 is no ValType encoding.
constexpr ValType kAny = static_cast<ValType>(0);

// Storage for one-value block types, so a frame can point at its types
// without owning them.
constexpr ValType kSingles[] = {ValType::I32,  ValType::I64,     ValType::F32,      ValType::F64,
                                ValType::V128, ValType::FuncRef, ValType::ExternRef};

const ValType* single(ValType t) {
  for (const ValType& s : kSingles) {
    if (s == t) return &s;
  }
  return &kSingles[0];  // unreachable: read_valtype only yields the types above
}

bool same_types(const ValType* a, uint32_t na, const ValType* b, uint32_t nb) {
  if (na != nb) return false;
  for (uint32_t i = 0; i < na; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

bool FuncValidator::fail(const char* msg) {
  error_ = make_error(in_.offset, msg);
  return false;
}

bool FuncValidator::fail_index(const char* what, uint64_t index) {
  error_ = indexed_error(in_.offset, what, index);
  return false;
}

bool FuncValidator::pop_any(ValType* out) {
  const Ctrl& f = ctrls_.back();
  if (vals_.size() == f.height) {
    if (f.unreachable) {
      *out = kAny;
      return true;
    }
    return fail("type mismatch");
  }
  *out = vals_.back();
  vals_.pop_back();
  return true;
}

bool FuncValidator::pop(ValType expect) {
  ValType t = kAny;
  if (!pop_any(&t)) return false;
  if (t != expect && t != kAny && expect != kAny) return fail("type mismatch");
  return true;
}

bool FuncValidator::pop_vals(const ValType* ts, uint32_t n) {
  for (uint32_t i = n; i-- > 0;) {
    if (!pop(ts[i])) return false;
  }
  return true;
}

// Checks that the top of the stack matches `ts` without popping: br_table
// checks every target against the same operands.
bool FuncValidator::check_top(const ValType* ts, uint32_t n) {
  const Ctrl& f = ctrls_.back();
  size_t avail = vals_.size() - f.height;
  for (uint32_t i = 0; i < n; ++i) {
    ValType expect = ts[n - 1 - i];
    if (i >= avail) {
      if (f.unreachable) return true;
      return fail("type mismatch");
    }
    ValType got = vals_[vals_.size() - 1 - i];
    if (got != expect && got != kAny) return fail("type mismatch");
  }
  return true;
}

void FuncValidator::push_ctrl(Opcode op, const ValType* s, uint32_t ns, const ValType* e, uint32_t ne) {
  ctrls_.push_back(Ctrl{op, s, ns, e, ne, uint32_t(vals_.size()), false});
  push_vals(s, ns);
}

bool FuncValidator::pop_ctrl(Ctrl* out) {
  const Ctrl& f = ctrls_.back();
  if (!pop_vals(f.end, f.n_end)) return false;
  if (vals_.size() != f.height) return fail("type mismatch");
  *out = f;
  ctrls_.pop_back();
  return true;
}

void FuncValidator::set_unreachable() {
  Ctrl& f = ctrls_.back();
  vals_.resize(f.height);
  f.unreachable = true;
}

bool FuncValidator::label(uint32_t depth, const ValType** ts, uint32_t* n) {
  if (depth >= ctrls_.size()) return fail_index("unknown label", depth);
  const Ctrl& f = ctrls_[ctrls_.size() - 1 - depth];
  if (f.op == Opcode::Loop) {
    *ts = f.start;
    *n = f.n_start;
  } else {
    *ts = f.end;
    *n = f.n_end;
  }
  return true;
}

bool FuncValidator::block_type(const BlockType& bt, const ValType** s, uint32_t* ns, const ValType** e, uint32_t* ne) {
  switch (bt.kind) {
    case BlockType::Void:
      *s = *e = nullptr;
      *ns = *ne = 0;
      return true;
    case BlockType::Value:
      *s = nullptr;
      *ns = 0;
      *e = single(bt.type);
      *ne = 1;
      return true;
    case BlockType::Index: {
      if (bt.index >= c_.m.types.size()) return fail_index("unknown type", bt.index);
      const FuncType& ft = c_.m.types[bt.index];
      *s = ft.params.data();
      *ns = uint32_t(ft.params.size());
      *e = ft.results.data();
      *ne = uint32_t(ft.results.size());
      return true;
    }
  }
  return fail("malformed block type");
}

// The row of opcodes.def gives the whole signature: pop the parameters right
// to left, push the result.
bool FuncValidator::apply_sig(const OpcodeInfo& info) {
  ValType t = kAny;
  if (optype_to_valtype(info.p3, &t) && !pop(t)) return false;
  if (optype_to_valtype(info.p2, &t) && !pop(t)) return false;
  if (optype_to_valtype(info.p1, &t) && !pop(t)) return false;
  if (optype_to_valtype(info.result, &t)) push(t);
  return true;
}

bool FuncValidator::need_memory() {
  if (c_.memories.empty()) return fail_index("unknown memory", 0);
  return true;
}

bool FuncValidator::need_table(uint32_t idx, ValType* elem) {
  if (idx >= c_.tables.size()) return fail_index("unknown table", idx);
  *elem = c_.tables[idx].elem;
  return true;
}

bool FuncValidator::need_elem(uint32_t idx, ValType* type) {
  if (idx >= c_.m.elems.size()) return fail_index("unknown elem segment", idx);
  *type = c_.m.elems[idx].type;
  return true;
}

bool FuncValidator::need_data(uint32_t idx) {
  // The data count section lets bodies be validated before the data section
  // is seen, which is why the binary format requires it here. Without one,
  // an index past every data segment is reported as unknown first: wast2json
  // omits the section from modules that have no data at all.
  uint32_t count = c_.m.data_count ? *c_.m.data_count : uint32_t(c_.m.datas.size());
  if (idx >= count) return fail_index("unknown data segment", idx);
  if (!c_.m.data_count) return fail("data count section required");
  return true;
}

bool FuncValidator::step() {
  const Opcode op = in_.op;
  const OpcodeInfo& info = opcode_info(op);
  if (is_simple(op)) {
    if (info.imm == Imm::Mem || info.imm == Imm::MemLane) {
      if (!need_memory()) return false;
      // The exponent is a u32 from the binary; anything >= 32 is certainly
      // too large, and shifting by it would be undefined.
      if (in_.a >= 32 || (uint64_t{1} << in_.a) > info.mem_size) {
        return fail("alignment must not be larger than natural");
      }
    }
    if ((info.imm == Imm::Lane || info.imm == Imm::MemLane) && in_.lane >= simd_lanes(op))
      return fail("invalid lane index");
    if (info.imm == Imm::Shuffle)
      for (uint8_t lane : in_.bytes)
        if (lane >= simd_lanes(op)) return fail("invalid lane index");
    return apply_sig(info);
  }

  ValType t = kAny, t2 = kAny;
  const ValType *s, *e;
  uint32_t ns, ne;
  switch (op) {
    case Opcode::Unreachable: set_unreachable(); return true;
    case Opcode::Nop: return true;
    case Opcode::Block:
    case Opcode::Loop:
      if (!block_type(in_.block, &s, &ns, &e, &ne)) return false;
      if (!pop_vals(s, ns)) return false;
      push_ctrl(op, s, ns, e, ne);
      return true;
    case Opcode::If:
      if (!block_type(in_.block, &s, &ns, &e, &ne)) return false;
      if (!pop(ValType::I32)) return false;
      if (!pop_vals(s, ns)) return false;
      push_ctrl(op, s, ns, e, ne);
      return true;
    case Opcode::Else: {
      if (ctrls_.back().op != Opcode::If) return fail("else without if");
      Ctrl f;
      if (!pop_ctrl(&f)) return false;
      push_ctrl(Opcode::Else, f.start, f.n_start, f.end, f.n_end);
      return true;
    }
    case Opcode::End: {
      Ctrl f;
      if (!pop_ctrl(&f)) return false;
      // An `if` without `else` has an implicit empty else branch, which
      // passes its inputs through unchanged.
      if (f.op == Opcode::If && !same_types(f.start, f.n_start, f.end, f.n_end)) {
        return fail("type mismatch");
      }
      push_vals(f.end, f.n_end);
      return true;
    }
    case Opcode::Br:
      if (!label(in_.a, &s, &ns)) return false;
      if (!pop_vals(s, ns)) return false;
      set_unreachable();
      return true;
    case Opcode::BrIf:
      if (!label(in_.a, &s, &ns)) return false;
      if (!pop(ValType::I32)) return false;
      if (!pop_vals(s, ns)) return false;
      push_vals(s, ns);
      return true;
    case Opcode::BrTable: {
      if (!label(in_.targets.back(), &e, &ne)) return false;
      if (!pop(ValType::I32)) return false;
      for (size_t i = 0; i + 1 < in_.targets.size(); ++i) {
        if (!label(in_.targets[i], &s, &ns)) return false;
        if (ns != ne) return fail("type mismatch");
        if (!check_top(s, ns)) return false;
      }
      if (!pop_vals(e, ne)) return false;
      set_unreachable();
      return true;
    }
    case Opcode::Return: {
      const Ctrl& fn = ctrls_.front();
      if (!pop_vals(fn.end, fn.n_end)) return false;
      set_unreachable();
      return true;
    }
    case Opcode::Call: {
      if (in_.a >= c_.func_types.size()) return fail_index("unknown function", in_.a);
      const FuncType& ft = c_.m.types[c_.func_types[in_.a]];
      if (!pop_vals(ft.params.data(), uint32_t(ft.params.size()))) return false;
      push_vals(ft.results.data(), uint32_t(ft.results.size()));
      return true;
    }
    case Opcode::CallIndirect: {
      if (!need_table(in_.b, &t)) return false;
      if (t != ValType::FuncRef) return fail("type mismatch");
      if (in_.a >= c_.m.types.size()) return fail_index("unknown type", in_.a);
      const FuncType& ft = c_.m.types[in_.a];
      if (!pop(ValType::I32)) return false;
      if (!pop_vals(ft.params.data(), uint32_t(ft.params.size()))) return false;
      push_vals(ft.results.data(), uint32_t(ft.results.size()));
      return true;
    }
    case Opcode::Drop: return pop_any(&t);
    case Opcode::Select:
      // Untyped select only takes numeric and vector operands: reference
      // operands need `select t` so their type is known without inspecting
      // the stack.
      if (!pop(ValType::I32) || !pop_any(&t) || !pop_any(&t2)) return false;
      if ((t != kAny && is_ref(t)) || (t2 != kAny && is_ref(t2))) return fail("type mismatch");
      if (t != t2 && t != kAny && t2 != kAny) return fail("type mismatch");
      push(t == kAny ? t2 : t);
      return true;
    case Opcode::SelectT:
      if (in_.select_types.size() != 1) return fail("invalid result arity");
      t = in_.select_types[0];
      if (!pop(ValType::I32) || !pop(t) || !pop(t)) return false;
      push(t);
      return true;
    case Opcode::LocalGet:
      if (in_.a >= locals_.size()) return fail_index("unknown local", in_.a);
      push(locals_[in_.a]);
      return true;
    case Opcode::LocalSet:
      if (in_.a >= locals_.size()) return fail_index("unknown local", in_.a);
      return pop(locals_[in_.a]);
    case Opcode::LocalTee:
      if (in_.a >= locals_.size()) return fail_index("unknown local", in_.a);
      if (!pop(locals_[in_.a])) return false;
      push(locals_[in_.a]);
      return true;
    case Opcode::GlobalGet:
      if (in_.a >= c_.globals.size()) return fail_index("unknown global", in_.a);
      push(c_.globals[in_.a].type);
      return true;
    case Opcode::GlobalSet:
      if (in_.a >= c_.globals.size()) return fail_index("unknown global", in_.a);
      if (!c_.globals[in_.a].mut) return fail("global is immutable");
      return pop(c_.globals[in_.a].type);
    case Opcode::TableGet:
      if (!need_table(in_.a, &t) || !pop(ValType::I32)) return false;
      push(t);
      return true;
    case Opcode::TableSet: return need_table(in_.a, &t) && pop(t) && pop(ValType::I32);
    case Opcode::TableSize:
      if (!need_table(in_.a, &t)) return false;
      push(ValType::I32);
      return true;
    case Opcode::TableGrow:
      if (!need_table(in_.a, &t) || !pop(ValType::I32) || !pop(t)) return false;
      push(ValType::I32);
      return true;
    case Opcode::TableFill: return need_table(in_.a, &t) && pop(ValType::I32) && pop(t) && pop(ValType::I32);
    case Opcode::TableCopy:
      if (!need_table(in_.a, &t) || !need_table(in_.b, &t2)) return false;
      if (t != t2) return fail("type mismatch");
      return pop(ValType::I32) && pop(ValType::I32) && pop(ValType::I32);
    case Opcode::TableInit:
      if (!need_table(in_.b, &t) || !need_elem(in_.a, &t2)) return false;
      if (t != t2) return fail("type mismatch");
      return pop(ValType::I32) && pop(ValType::I32) && pop(ValType::I32);
    case Opcode::ElemDrop: return need_elem(in_.a, &t);
    case Opcode::MemorySize:
      if (!need_memory()) return false;
      push(ValType::I32);
      return true;
    case Opcode::MemoryGrow:
      if (!need_memory() || !pop(ValType::I32)) return false;
      push(ValType::I32);
      return true;
    case Opcode::MemoryInit: return need_memory() && need_data(in_.a) && apply_sig(info);
    case Opcode::DataDrop: return need_data(in_.a);
    case Opcode::MemoryCopy:
    case Opcode::MemoryFill: return need_memory() && apply_sig(info);
    case Opcode::RefNull: push(in_.ref_type); return true;
    case Opcode::RefIsNull:
      if (!pop_any(&t)) return false;
      if (t != kAny && !is_ref(t)) return fail("type mismatch");
      push(ValType::I32);
      return true;
    case Opcode::RefFunc:
      if (in_.a >= c_.func_types.size()) return fail_index("unknown function", in_.a);
      if (!c_.declared_refs[in_.a]) return fail("undeclared function reference");
      push(ValType::FuncRef);
      return true;
    default: break;
  }
  // Every opcode of the table is handled above or is simple; reaching here
  // means opcodes.def grew a row this validator does not know.
  return fail("unsupported opcode");
}

Status FuncValidator::validate(uint32_t defined_index) {
  const Module& m = c_.m;
  const FunctionBody& body = m.codes[defined_index];
  const FuncType& ft = m.types[c_.func_types[m.num_imported_funcs + defined_index]];
  if (body.body_offset > body.body_end || body.body_end > m.bytes.size()) {
    return make_error(body.size_offset, "unexpected end");
  }

  locals_.assign(ft.params.begin(), ft.params.end());
  locals_.insert(locals_.end(), body.locals.begin(), body.locals.end());
  vals_.clear();
  ctrls_.clear();
  push_ctrl(Opcode::Block, nullptr, 0, ft.results.data(), uint32_t(ft.results.size()));

  ByteReader r(m.bytes.data() + body.body_offset, body.body_end - body.body_offset, body.body_offset);
  while (!ctrls_.empty()) {
    if (r.at_end()) return missing_end(r.offset());
    WW_TRY(read_instr(r, in_));
    if (!step()) return error_;
  }
  // The final `end` closed the function's block before the body's size was
  // used up.
  if (!r.at_end()) return make_error(r.offset(), "section size mismatch");
  return Status::Ok();
}

// The reference interpreter decodes a body without stopping at its size, so
// a missing final `end` shows up as whatever byte follows: the next body's
// first byte ("END opcode expected") or the end of the module.
Error FuncValidator::missing_end(uint64_t offset) const {
  return make_error(offset, offset >= c_.m.bytes.size() ? "unexpected end" : "END opcode expected");
}

Status FuncValidator::check_syntax(uint32_t defined_index) {
  const Module& m = c_.m;
  const FunctionBody& body = m.codes[defined_index];
  if (body.body_offset > body.body_end || body.body_end > m.bytes.size()) {
    return make_error(body.size_offset, "unexpected end");
  }
  ByteReader r(m.bytes.data() + body.body_offset, body.body_end - body.body_offset, body.body_offset);
  uint64_t depth = 1;
  while (depth > 0) {
    if (r.at_end()) return missing_end(r.offset());
    WW_TRY(read_instr(r, in_));
    if (in_.op == Opcode::Block || in_.op == Opcode::Loop || in_.op == Opcode::If) ++depth;
    if (in_.op == Opcode::End) --depth;
  }
  if (!r.at_end()) return make_error(r.offset(), "section size mismatch");
  return Status::Ok();
}

}  // namespace ww::validate
