// The emission pass: one linear walk per function turns the stack machine
// into register bytecode over frame slots.
//
// Model: operand i of the wasm stack has a home slot num_locals + i. An
// entry lives either in its home or, right after local.get, still in the
// local's slot ("lazy"); a lazy entry is copied home before its local is
// written and at every control-flow join, so every path into a join agrees
// on where values are. Constants are written home at once; a peephole on
// the last emitted op folds them into immediate forms, folds a comparison
// into the branch that consumes it, and retargets an op's result slot to a
// local for local.set / local.tee.
#include "translate/emitter.h"

namespace ww::translate_detail {

Emitter::Cond Emitter::pop_cond() {
  Cond c;
  if (last_made_top() && t_.if_op[int(last_.op)] != kNoOp) {
    BcDecoded d;
    if (bc_decode(code_.data() + last_.pc, code_.size() - last_.pc, &d)) {
      c.cmp = last_.op;
      c.a = d.s[1] / w_;
      c.b = bc_op_info(d.op).fmt == BcFmt::S2I ? d.i[0] : d.s[2] / w_;
      code_.resize(last_.pc);
      last_.pc = kNone;
      pop();
      return c;
    }
  }
  c.a = pop();
  return c;
}

void Emitter::local_set(uint32_t local, bool tee) {
  if (last_made_top() && (bc_op_info(last_.op).flags & kDst)) {
    pop();
    if (lazy_refs_[local] == 0) {
      // Retarget the producing op's result slot to the local.
      code_[last_.pc] = (code_[last_.pc] & 0xffffu) | ((local * w_) << 16);
      last_.pc = kNone;
      if (tee) push_lazy(local);
      return;
    }
    materialize_local(local);
    uint32_t src = home(height());
    emit(move_op(), local, src);
    if (tee) push_lazy(local);
    return;
  }
  uint32_t src = pop();
  materialize_local(local);
  copy(local, src);
  if (tee) push_lazy(local);
}

void Emitter::binary(BcOp op) {
  BcOp imm = t_.imm_form[int(op)];
  if (imm != kNoOp && last_made_top() && last_.op == BcOp::Const32) {
    uint32_t value = code_[last_.pc + 1];
    code_.resize(last_.pc);
    last_.pc = kNone;
    pop();
    uint32_t a = pop();
    uint32_t d = push_home();
    emit_def(imm, d, a, 0, 0, value);
    return;
  }
  uint32_t b = pop();
  uint32_t a = pop();
  uint32_t d = push_home();
  emit_def(op, d, a, b);
}

// An op whose row in opcodes.def is its whole story: one bytecode op of the
// same name, its operands in stack order, its immediate by kind.
Status Emitter::simple_op(Opcode op) {
  BcOp bop = t_.simple[int(op)];
  if (bop == kNoOp) return make_error(in_.offset, std::string("cannot translate ") + opcode_name(op));
  const OpcodeInfo& oi = opcode_info(op);
  switch (oi.imm) {
    case Imm::Mem:
      if (oi.result != OpType::___) {
        uint32_t a = pop();
        emit_def(bop, push_home(), a, 0, 0, uint32_t(in_.imm));
      } else {
        uint32_t v = pop(), a = pop();
        emit(bop, a, v, 0, 0, uint32_t(in_.imm));
      }
      return Status::Ok();
    case Imm::MemLane:
      if (oi.result != OpType::___) {
        uint32_t v = pop(), a = pop();
        emit(bop, push_home(), a, v, 0, uint32_t(in_.imm), in_.lane);
      } else {
        uint32_t v = pop(), a = pop();
        emit(bop, a, v, 0, 0, uint32_t(in_.imm), in_.lane);
      }
      return Status::Ok();
    case Imm::Lane:
      if (oi.p2 != OpType::___) {
        uint32_t x = pop(), v = pop();
        emit_def(bop, push_home(), v, x, 0, in_.lane);
      } else {
        uint32_t v = pop();
        emit_def(bop, push_home(), v, 0, 0, in_.lane);
      }
      return Status::Ok();
    case Imm::V128Const: emit_def(bop, push_home(), 0, 0, 0, v128_const(in_.bytes)); return Status::Ok();
    case Imm::Shuffle: {
      uint32_t b = pop(), a = pop();
      const uint32_t k = v128_const(in_.bytes);
      emit_def(bop, push_home(), a, b, 0, k);
      return Status::Ok();
    }
    default: break;
  }
  if (oi.p3 != OpType::___) {
    uint32_t c = pop(), b = pop(), a = pop();
    emit_def(bop, push_home(), a, b, c);
  } else if (oi.p2 != OpType::___) {
    binary(bop);
  } else {
    uint32_t a = pop();
    emit_def(bop, push_home(), a);
  }
  return Status::Ok();
}

void Emitter::fallthrough_results(const Ctrl& c) {
  if (c.kind == Kind::Func) {
    emit_label_moves(c);
    emit(BcOp::Return);
  } else {
    materialize_top(c.nresults);
  }
}

void Emitter::do_br(uint32_t depth) {
  Ctrl& c = label(depth);
  emit_label_moves(c);
  emit_jump(c);
  unreachable_ = true;
}

void Emitter::do_br_if(uint32_t depth) {
  Cond cond = pop_cond();
  Ctrl& c = label(depth);
  uint32_t base = label_base(c), arity = label_arity(c);
  if (c.kind != Kind::Func && !needs_moves(base, arity)) {
    if (c.kind == Kind::Loop) {
      emit_cond_jump(cond, true, c.loop_start);
    } else {
      emit_cond_jump(cond, true, c.chain);
      link(c);
    }
    return;
  }
  uint32_t skip = emit_cond_jump(cond, false, kNone);
  emit_moves(base, arity);
  emit_jump(c);
  bind_chain(skip);
  last_.pc = kNone;
}

void Emitter::do_br_table(const std::vector<uint32_t>& targets) {
  uint32_t idx = pop();
  uint32_t start = uint32_t(bc_.br_tables.size());
  uint32_t count = uint32_t(targets.size());
  emit(BcOp::BrTable, idx, 0, 0, 0, start, count);
  bc_.br_tables.resize(size_t(start) + count, kNone);
  // Targets that need value moves (or a return) go through a stub after
  // the br_table; one stub per distinct label.
  stub_of_depth_.assign(ctrl_.size(), kNone);
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t depth = targets[k];
    Ctrl& c = label(depth);
    uint32_t base = label_base(c), arity = label_arity(c);
    if (c.kind != Kind::Func && !needs_moves(base, arity)) {
      if (c.kind == Kind::Loop) {
        bc_.br_tables[start + k] = c.loop_start;
      } else {
        bc_.br_tables[start + k] = c.bt_chain;
        c.bt_chain = start + k;
      }
      continue;
    }
    if (stub_of_depth_[depth] == kNone) {
      stub_of_depth_[depth] = here();
      emit_moves(base, arity);
      emit_jump(c);
    }
    bc_.br_tables[start + k] = stub_of_depth_[depth];
  }
  unreachable_ = true;
}

Status Emitter::begin_function(uint32_t def, const FunctionManifest& man) {
  nl_ = man.num_locals;
  if (nl_ > limit_) {
    const uint32_t func_index = m_.num_imported_funcs + def;
    return make_error(m_.codes[def].size_offset, "function " + m_.func_display_name(func_index) + ": " +
                                                     std::to_string(nl_) + " locals exceed the frame limit of " +
                                                     std::to_string(limit_) + " slots");
  }
  begin_ = uint32_t(code_.size());
  max_height_ = 0;
  loc_.clear();
  lazy_refs_.assign(nl_, 0);
  ctrl_.clear();
  ctrl_.push_back({Kind::Func, 0, 0, man.num_results, 0, kNone, kNone, kNone});
  last_ = {};
  unreachable_ = false;
  bad_ = false;
  skip_depth_ = 0;
  return Status::Ok();
}

// Dead code is skipped, but nesting is tracked to find the arm's end.
bool Emitter::skip_dead(Opcode op) {
  if (op == Opcode::Block || op == Opcode::Loop || op == Opcode::If) {
    ++skip_depth_;
    return true;
  }
  if (op != Opcode::Else && op != Opcode::End) return true;
  if (skip_depth_ > 0) {
    if (op == Opcode::End) --skip_depth_;
    return true;
  }
  return false;
}

Status Emitter::run(uint32_t def, FunctionManifest* man) {
  WW_TRY(begin_function(def, *man));
  const FunctionBody& body = m_.codes[def];
  ByteReader r(m_.bytes.data() + body.body_offset, body.body_end - body.body_offset, body.body_offset);
  while (!ctrl_.empty()) {
    if (r.at_end()) return make_error(r.offset(), "function body ends before its end");
    WW_TRY(read_instr(r, in_));
    const Opcode op = in_.op;
    if (unreachable_ && skip_dead(op)) continue;
    if (!plausible(op)) bad_ = true;
    if (bad_) return make_error(in_.offset, "cannot translate unvalidated code");
    if (!control_op(op) && !state_op(op)) WW_TRY(simple_op(op));
  }
  return finish_function(def, man);
}

// Blocks, branches and calls.
bool Emitter::control_op(Opcode op) {
  switch (op) {
    case Opcode::Unreachable:
      emit(BcOp::Unreachable);
      unreachable_ = true;
      break;
    case Opcode::Nop: break;
    case Opcode::Block:
      materialize_all();
      enter(Kind::Block, in_.block);
      break;
    case Opcode::Loop:
      materialize_all();
      enter(Kind::Loop, in_.block);
      ctrl_.back().loop_start = here();
      last_.pc = kNone;
      break;
    case Opcode::If: {
      Cond cond = pop_cond();
      materialize_all();
      enter(Kind::If, in_.block);
      ctrl_.back().else_chain = emit_cond_jump(cond, false, kNone);
      break;
    }
    case Opcode::Else: {
      Ctrl& c = ctrl_.back();
      if (!unreachable_) {
        fallthrough_results(c);
        emit(BcOp::Br, 0, 0, 0, 0, c.chain);
        link(c);
      }
      bind_chain(c.else_chain);
      c.else_chain = kNone;
      c.kind = Kind::Else;
      last_.pc = kNone;
      pop_to(c.height);
      for (uint32_t i = 0; i < c.nparams; ++i) push_home();
      unreachable_ = false;
      break;
    }
    case Opcode::End: {
      Ctrl& c = ctrl_.back();
      if (!unreachable_) fallthrough_results(c);
      if (c.kind == Kind::Func) {
        ctrl_.pop_back();
        break;
      }
      if (c.kind == Kind::If) bind_chain(c.else_chain);
      bind(c);
      uint32_t h = c.height, nr = c.nresults;
      ctrl_.pop_back();
      pop_to(h);
      for (uint32_t i = 0; i < nr; ++i) push_home();
      unreachable_ = false;
      last_.pc = kNone;
      break;
    }
    case Opcode::Br: do_br(in_.a); break;
    case Opcode::BrIf: do_br_if(in_.a); break;
    case Opcode::BrTable: do_br_table(in_.targets); break;
    case Opcode::Return: do_br(uint32_t(ctrl_.size()) - 1); break;
    case Opcode::Call: {
      const FuncType& ft = m_.func_type(in_.a);
      uint32_t np = uint32_t(ft.params.size()), nr = uint32_t(ft.results.size());
      materialize_top(np);
      uint32_t base = home(height() - np);
      pop_to(height() - np);
      emit(in_.a < m_.num_imported_funcs ? BcOp::CallImport : BcOp::Call, base, 0, 0, 0, in_.a);
      for (uint32_t i = 0; i < nr; ++i) push_home();
      // The callee's frame starts at `base`, so it needs no slot of ours
      // beyond the results; the interpreter checks its stack space.
      break;
    }
    case Opcode::CallIndirect: {
      const FuncType& ft = m_.types[in_.a];
      uint32_t np = uint32_t(ft.params.size()), nr = uint32_t(ft.results.size());
      uint32_t idx = pop();
      materialize_top(np);
      uint32_t base = home(height() - np);
      pop_to(height() - np);
      emit(BcOp::CallIndirect, base, idx, 0, 0, in_.a, in_.b);
      for (uint32_t i = 0; i < nr; ++i) push_home();
      break;
    }
    default: return false;
  }
  return true;
}

// Values' places: the stack, locals, globals, tables, memory, constants.
bool Emitter::state_op(Opcode op) {
  switch (op) {
    case Opcode::Drop:
      pop();
      last_.pc = kNone;
      break;
    case Opcode::Select:
    case Opcode::SelectT: {
      uint32_t c = pop(), b = pop(), a = pop();
      uint32_t d = push_home();
      emit_def(w_ == 2 ? BcOp::Select2 : BcOp::Select, d, a, b, c);
      break;
    }
    case Opcode::LocalGet: push_lazy(in_.a); break;
    case Opcode::LocalSet: local_set(in_.a, false); break;
    case Opcode::LocalTee: local_set(in_.a, true); break;
    case Opcode::GlobalGet: {
      uint32_t d = push_home();
      emit_def(global_is_v128(in_.a) ? BcOp::GlobalGetV128 : BcOp::GlobalGet, d, 0, 0, 0, in_.a);
      break;
    }
    case Opcode::GlobalSet:
      emit(global_is_v128(in_.a) ? BcOp::GlobalSetV128 : BcOp::GlobalSet, pop(), 0, 0, 0, in_.a);
      break;
    case Opcode::TableGet: {
      uint32_t i = pop();
      uint32_t d = push_home();
      emit_def(BcOp::TableGet, d, i, 0, 0, in_.a);
      break;
    }
    case Opcode::TableSet: {
      uint32_t v = pop(), i = pop();
      emit(BcOp::TableSet, i, v, 0, 0, in_.a);
      break;
    }
    case Opcode::MemorySize: emit_def(BcOp::MemorySize, push_home()); break;
    case Opcode::MemoryGrow: {
      uint32_t n = pop();
      emit(BcOp::MemoryGrow, push_home(), n);
      break;
    }
    case Opcode::I32Const: emit_def(BcOp::Const32, push_home(), 0, 0, 0, uint32_t(in_.imm)); break;
    case Opcode::F32Const: emit_def(BcOp::Const32, push_home(), 0, 0, 0, uint32_t(in_.imm)); break;
    case Opcode::I64Const:
    case Opcode::F64Const: {
      uint64_t v = in_.imm;
      uint32_t d = push_home();
      if (uint64_t(int64_t(int32_t(uint32_t(v)))) == v) {
        emit_def(BcOp::Const64S, d, 0, 0, 0, uint32_t(v));
      } else {
        emit_def(BcOp::Const64, d, 0, 0, 0, uint32_t(bc_.consts.size()));
        bc_.consts.push_back(v);
      }
      break;
    }
    case Opcode::RefNull: emit_def(BcOp::Const32, push_home(), 0, 0, 0, 0); break;
    case Opcode::RefIsNull: {
      uint32_t a = pop();
      emit_def(BcOp::RefIsNull, push_home(), a);
      break;
    }
    case Opcode::RefFunc: emit_def(BcOp::RefFunc, push_home(), 0, 0, 0, in_.a); break;
    case Opcode::MemoryInit: bulk(BcOp::MemoryInit, in_.a); break;
    case Opcode::DataDrop: emit(BcOp::DataDrop, 0, 0, 0, 0, in_.a); break;
    case Opcode::MemoryCopy: bulk(BcOp::MemoryCopy); break;
    case Opcode::MemoryFill: bulk(BcOp::MemoryFill); break;
    case Opcode::TableInit: bulk(BcOp::TableInit, in_.a, in_.b); break;
    case Opcode::ElemDrop: emit(BcOp::ElemDrop, 0, 0, 0, 0, in_.a); break;
    case Opcode::TableCopy: bulk(BcOp::TableCopy, in_.a, in_.b); break;
    case Opcode::TableGrow: {
      uint32_t n = pop(), v = pop();
      emit(BcOp::TableGrow, push_home(), v, n, 0, in_.a);
      break;
    }
    case Opcode::TableSize: emit_def(BcOp::TableSize, push_home(), 0, 0, 0, in_.a); break;
    case Opcode::TableFill: bulk(BcOp::TableFill, in_.a); break;
    default: return false;
  }
  return true;
}

Status Emitter::finish_function(uint32_t def, FunctionManifest* man) {
  const FunctionBody& body = m_.codes[def];
  if (bad_) return make_error(body.body_end, "cannot translate unvalidated code");
  uint32_t frame = nl_ + max_height_;
  if (frame > limit_) {
    const uint32_t func_index = m_.num_imported_funcs + def;
    return make_error(body.size_offset, "function " + m_.func_display_name(func_index) + ": frame of " +
                                            std::to_string(frame) + " slots exceeds the limit of " +
                                            std::to_string(limit_));
  }
  man->max_stack = max_height_;
  man->frame_slots = frame;
  // The executors see physical slots: in a wide module, two per value.
  FunctionCode& fc = bc_.funcs[def];
  fc.code_begin = begin_;
  fc.code_end = uint32_t(code_.size());
  fc.type_index = man->type_index;
  fc.num_params = man->num_params * w_;
  fc.num_results = man->num_results * w_;
  fc.num_locals = nl_ * w_;
  fc.frame_slots = frame * w_;
  return Status::Ok();
}

Emitter* new_emitter(const Module& m, BytecodeModule& bc, const TranslateOptions& opts) {
  return new Emitter(m, bc, opts);
}
void delete_emitter(Emitter* e) { delete e; }
Status emit_function(Emitter& e, uint32_t def, FunctionManifest* man) { return e.run(def, man); }

}  // namespace ww::translate_detail
