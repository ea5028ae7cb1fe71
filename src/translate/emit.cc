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
#include <algorithm>
#include <string>

#include "bytecode/ops.h"
#include "common/byte_reader.h"
#include "translate/internal.h"
#include "translate/op_tables.h"

namespace ww::translate_detail {

namespace {

constexpr uint32_t kNone = ~0u;

}  // namespace

class Emitter {
 public:
  Emitter(const Module& m, BytecodeModule& bc, const TranslateOptions& opts)
      : m_(m), bc_(bc), code_(bc.code), t_(tables()), w_(bc.slot_width) {
    // Encoded slot numbers are 16 bits: a wide module's logical slot L
    // takes 2L and 2L + 1.
    limit_ = std::min<uint32_t>(opts.max_frame_slots, 65535) / w_;
  }

  Status run(uint32_t def, FunctionManifest* man);

 private:
  enum class Kind : uint8_t { Func, Block, Loop, If, Else };
  struct Ctrl {
    Kind kind;
    uint32_t height;  // stack height below the block's params
    uint32_t nparams, nresults;
    uint32_t loop_start;  // Loop: function-relative word offset
    uint32_t chain;       // forward branches to the end: code positions
    uint32_t bt_chain;    // forward br_table entries: br_tables positions
    uint32_t else_chain;  // If: the branch to the else arm
  };
  // A branch condition: a slot, or a comparison folded into the branch.
  struct Cond {
    BcOp cmp = kNoOp;  // kNoOp: test slot a
    uint32_t a = 0, b = 0;  // operands (b is the immediate for imm forms)
  };
  // The last emitted op, when it wrote the stack's top entry at its home
  // and nothing was emitted or bound after it.
  struct Last {
    uint32_t pc = kNone;  // absolute word index
    uint32_t height = 0;
    BcOp op = kNoOp;
  };

  uint32_t here() const { return uint32_t(code_.size()) - begin_; }
  uint32_t home(uint32_t i) const { return nl_ + i; }
  uint32_t height() const { return uint32_t(loc_.size()); }

  uint32_t push_home() {
    uint32_t i = height();
    loc_.push_back(home(i));
    if (loc_.size() > max_height_) max_height_ = uint32_t(loc_.size());
    return home(i);
  }
  void push_lazy(uint32_t local) {
    loc_.push_back(local);
    ++lazy_refs_[local];
    if (loc_.size() > max_height_) max_height_ = uint32_t(loc_.size());
  }
  uint32_t pop() {
    // Validated code never pops an empty stack; unvalidated input must not
    // crash the translator either, so it is noted and reported.
    if (loc_.empty()) {
      bad_ = true;
      return 0;
    }
    uint32_t s = loc_.back();
    loc_.pop_back();
    if (s < nl_) --lazy_refs_[s];
    return s;
  }
  void pop_to(uint32_t h) {
    while (height() > h) pop();
  }

  // The model works in logical slots; ops are encoded with physical ones
  // (times the module's slot width).
  void emit(BcOp op, uint32_t s0 = 0, uint32_t s1 = 0, uint32_t s2 = 0, uint32_t s3 = 0,
            uint32_t i0 = 0, uint32_t i1 = 0) {
    last_.pc = kNone;
    bc_emit(code_, op, s0 * w_, s1 * w_, s2 * w_, s3 * w_, i0, i1);
  }
  // An op whose s0 is the new top entry's home.
  void emit_def(BcOp op, uint32_t s0, uint32_t s1 = 0, uint32_t s2 = 0, uint32_t s3 = 0,
                uint32_t i0 = 0) {
    uint32_t pc = uint32_t(code_.size());
    bc_emit(code_, op, s0 * w_, s1 * w_, s2 * w_, s3 * w_, i0);
    last_ = {pc, height() - 1, op};
  }
  // Whether the top entry was produced by the very last op, still at home.
  bool last_made_top() const {
    return last_.pc != kNone && height() > 0 && last_.height == height() - 1 &&
           loc_.back() == home(last_.height) &&
           last_.pc + bc_op_words(last_.op) == code_.size();
  }

  // A move of one value: both slots of it in a wide module.
  BcOp move_op() const { return w_ == 2 ? BcOp::Copy2 : BcOp::Copy; }
  void copy(uint32_t dst, uint32_t src) {
    if (dst != src) emit(move_op(), dst, src);
  }
  void materialize_entry(uint32_t i) {
    uint32_t s = loc_[i];
    if (s < nl_) {
      --lazy_refs_[s];
      loc_[i] = home(i);
      emit(move_op(), home(i), s);
    }
  }
  // Before `local` is written: entries still reading it move home.
  void materialize_local(uint32_t local) {
    if (lazy_refs_[local] == 0) return;
    for (uint32_t i = 0; i < height(); ++i)
      if (loc_[i] == local) materialize_entry(i);
  }
  void materialize_all() {
    for (uint32_t i = 0; i < height(); ++i) materialize_entry(i);
  }
  void materialize_top(uint32_t n) {
    if (n > height()) {
      bad_ = true;
      return;
    }
    for (uint32_t i = height() - n; i < height(); ++i) materialize_entry(i);
  }

  Ctrl& label(uint32_t depth) { return ctrl_[ctrl_.size() - 1 - depth]; }
  static uint32_t label_arity(const Ctrl& c) {
    return c.kind == Kind::Loop ? c.nparams : c.nresults;
  }
  uint32_t label_base(const Ctrl& c) const { return c.kind == Kind::Func ? 0 : home(c.height); }

  bool needs_moves(uint32_t base, uint32_t arity) {
    if (arity > height()) {
      bad_ = true;
      return false;
    }
    uint32_t first = height() - arity;
    for (uint32_t i = 0; i < arity; ++i)
      if (loc_[first + i] != base + i) return true;
    return false;
  }
  // Copies the top `arity` entries to slots base.. without changing the
  // model (the copies may sit on one path only). Sources are homes or
  // locals; targets are at or below the sources' homes, so copying home
  // first and then in increasing order never reads a clobbered slot.
  void emit_moves(uint32_t base, uint32_t arity) {
    if (arity > height()) {
      bad_ = true;
      return;
    }
    uint32_t first = height() - arity;
    bool direct = true;
    for (uint32_t i = 0; i < arity && direct; ++i) {
      uint32_t s = loc_[first + i];
      if (s != base + i && s >= base && s < base + arity) direct = false;
    }
    if (!direct) {
      for (uint32_t i = 0; i < arity; ++i) copy(home(first + i), loc_[first + i]);
      for (uint32_t i = 0; i < arity; ++i) copy(base + i, home(first + i));
      return;
    }
    for (uint32_t i = 0; i < arity; ++i) copy(base + i, loc_[first + i]);
  }

  // Forward-branch chains run through the target words themselves.
  uint32_t link(Ctrl& c) {
    uint32_t prev = c.chain;
    c.chain = uint32_t(code_.size()) - 1;
    return prev;
  }
  void bind_chain(uint32_t chain) {
    uint32_t target = here();
    while (chain != kNone) {
      uint32_t next = code_[chain];
      code_[chain] = target;
      chain = next;
    }
  }
  void bind(Ctrl& c) {
    bind_chain(c.chain);
    c.chain = kNone;
    uint32_t target = here();
    for (uint32_t p = c.bt_chain; p != kNone;) {
      uint32_t next = bc_.br_tables[p];
      bc_.br_tables[p] = target;
      p = next;
    }
    c.bt_chain = kNone;
    last_.pc = kNone;
  }
  // Moves a branch's values into label `c`'s slots. A function's single
  // result produced by the op just emitted is written to slot 0 directly:
  // nothing runs between it and the return.
  void emit_label_moves(const Ctrl& c) {
    if (c.kind == Kind::Func && c.nresults == 1 && last_made_top() &&
        (bc_op_info(last_.op).flags & kDst)) {
      code_[last_.pc] &= 0xffffu;
      last_.pc = kNone;
      return;
    }
    emit_moves(label_base(c), label_arity(c));
  }
  // Emits an unconditional jump to label `c` (values already moved).
  void emit_jump(Ctrl& c) {
    if (c.kind == Kind::Func) {
      emit(BcOp::Return);
    } else if (c.kind == Kind::Loop) {
      emit(BcOp::Br, 0, 0, 0, 0, c.loop_start);
    } else {
      emit(BcOp::Br, 0, 0, 0, 0, c.chain);
      link(c);
    }
  }

  Cond pop_cond();
  // Emits a conditional jump taken when the condition is `sense`, with
  // target word `target`; returns the target word's code position.
  uint32_t emit_cond_jump(const Cond& c, bool sense, uint32_t target) {
    if (c.cmp == kNoOp) {
      emit(sense ? BcOp::BrIf : BcOp::BrUnless, c.a, 0, 0, 0, target);
    } else {
      BcOp op = sense ? t_.if_op[int(c.cmp)] : t_.unless_op[int(c.cmp)];
      BcFmt f = bc_op_info(op).fmt;
      if (f == BcFmt::S1T)
        emit(op, c.a, 0, 0, 0, target);
      else if (f == BcFmt::S2T)
        emit(op, c.a, c.b, 0, 0, target);
      else  // S1IT
        emit(op, c.a, 0, 0, 0, c.b, target);
    }
    return uint32_t(code_.size()) - 1;
  }

  void do_br(uint32_t depth);
  void do_br_if(uint32_t depth);
  void do_br_table(const std::vector<uint32_t>& targets);
  void fallthrough_results(const Ctrl& c);
  void block_arity(const BlockType& bt, uint32_t* np, uint32_t* nr) const {
    switch (bt.kind) {
      case BlockType::Void: *np = 0; *nr = 0; break;
      case BlockType::Value: *np = 0; *nr = 1; break;
      case BlockType::Index:
        *np = uint32_t(m_.types[bt.index].params.size());
        *nr = uint32_t(m_.types[bt.index].results.size());
        break;
    }
  }
  void enter(Kind k, const BlockType& bt) {
    uint32_t np = 0, nr = 0;
    block_arity(bt, &np, &nr);
    if (np > height()) {
      bad_ = true;
      np = 0;
    }
    ctrl_.push_back({k, height() - np, np, nr, 0, kNone, kNone, kNone});
  }
  void local_set(uint32_t local, bool tee);
  // Index checks that keep the translator memory-safe on input that skipped
  // validation; validated modules always pass them.
  bool plausible(Opcode op) const {
    switch (op) {
      case Opcode::LocalGet: case Opcode::LocalSet: case Opcode::LocalTee:
        return in_.a < nl_;
      case Opcode::Br: case Opcode::BrIf:
        return in_.a < ctrl_.size();
      case Opcode::BrTable:
        for (uint32_t t : in_.targets)
          if (t >= ctrl_.size()) return false;
        return true;
      case Opcode::Call:
        return in_.a < m_.num_funcs() && m_.func_type_index(in_.a) < m_.types.size();
      case Opcode::CallIndirect:
        return in_.a < m_.types.size();
      case Opcode::Block: case Opcode::Loop: case Opcode::If:
        return in_.block.kind != BlockType::Index || in_.block.index < m_.types.size();
      case Opcode::Else:
        return ctrl_.back().kind == Kind::If;
      default:
        return true;
    }
  }
  void binary(BcOp op);
  Status simple_op(Opcode op);
  bool global_is_v128(uint32_t g) const { return g < m_.num_globals() && m_.global_type(g).type == ValType::V128; }
  // A v128 immediate as two consecutive consts: the index of the first.
  uint32_t v128_const(const std::array<uint8_t, 16>& bytes) {
    const uint32_t k = uint32_t(bc_.consts.size());
    bc_.consts.push_back(v128_word(bytes, 0));
    bc_.consts.push_back(v128_word(bytes, 8));
    return k;
  }

  const Module& m_;
  BytecodeModule& bc_;
  std::vector<uint32_t>& code_;
  const OpTables& t_;
  const uint32_t w_;  // physical slots per logical slot: 1, or 2 with v128 (BytecodeModule::slot_width)
  uint32_t limit_;

  // Per function; vectors keep their capacity across functions.
  uint32_t begin_ = 0, nl_ = 0, max_height_ = 0;
  std::vector<uint32_t> loc_;
  std::vector<uint32_t> lazy_refs_;
  std::vector<Ctrl> ctrl_;
  std::vector<uint32_t> stub_of_depth_;
  Last last_;
  bool unreachable_ = false;
  bool bad_ = false;  // input that validation would have rejected
  uint32_t skip_depth_ = 0;
  Instr in_;
};

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
    case Imm::V128Const:
      emit_def(bop, push_home(), 0, 0, 0, v128_const(in_.bytes));
      return Status::Ok();
    case Imm::Shuffle: {
      uint32_t b = pop(), a = pop();
      const uint32_t k = v128_const(in_.bytes);
      emit_def(bop, push_home(), a, b, 0, k);
      return Status::Ok();
    }
    default:
      break;
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

Status Emitter::run(uint32_t def, FunctionManifest* man) {
  const FunctionBody& body = m_.codes[def];
  const uint32_t func_index = m_.num_imported_funcs + def;
  nl_ = man->num_locals;
  if (nl_ > limit_) {
    return make_error(body.size_offset, "function " + m_.func_display_name(func_index) +
                                            ": " + std::to_string(nl_) +
                                            " locals exceed the frame limit of " +
                                            std::to_string(limit_) + " slots");
  }
  begin_ = uint32_t(code_.size());
  max_height_ = 0;
  loc_.clear();
  lazy_refs_.assign(nl_, 0);
  ctrl_.clear();
  ctrl_.push_back({Kind::Func, 0, 0, man->num_results, 0, kNone, kNone, kNone});
  last_ = {};
  unreachable_ = false;
  bad_ = false;
  skip_depth_ = 0;

  ByteReader r(m_.bytes.data() + body.body_offset, body.body_end - body.body_offset,
               body.body_offset);
  while (!ctrl_.empty()) {
    if (r.at_end()) return make_error(r.offset(), "function body ends before its end");
    WW_TRY(read_instr(r, in_));
    const Opcode op = in_.op;
    if (unreachable_) {
      // Dead code: skipped, but nesting is tracked to find the arm's end.
      if (op == Opcode::Block || op == Opcode::Loop || op == Opcode::If) {
        ++skip_depth_;
        continue;
      }
      if (op != Opcode::Else && op != Opcode::End) continue;
      if (skip_depth_ > 0) {
        if (op == Opcode::End) --skip_depth_;
        continue;
      }
    }
    if (!plausible(op)) bad_ = true;
    if (bad_) return make_error(in_.offset, "cannot translate unvalidated code");
    switch (op) {
      case Opcode::Unreachable:
        emit(BcOp::Unreachable);
        unreachable_ = true;
        break;
      case Opcode::Nop:
        break;
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
      case Opcode::Br:
        do_br(in_.a);
        break;
      case Opcode::BrIf:
        do_br_if(in_.a);
        break;
      case Opcode::BrTable:
        do_br_table(in_.targets);
        break;
      case Opcode::Return:
        do_br(uint32_t(ctrl_.size()) - 1);
        break;
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
      case Opcode::LocalGet:
        push_lazy(in_.a);
        break;
      case Opcode::LocalSet:
        local_set(in_.a, false);
        break;
      case Opcode::LocalTee:
        local_set(in_.a, true);
        break;
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
      case Opcode::MemorySize:
        emit_def(BcOp::MemorySize, push_home());
        break;
      case Opcode::MemoryGrow: {
        uint32_t n = pop();
        emit(BcOp::MemoryGrow, push_home(), n);
        break;
      }
      case Opcode::I32Const:
        emit_def(BcOp::Const32, push_home(), 0, 0, 0, uint32_t(in_.imm));
        break;
      case Opcode::F32Const:
        emit_def(BcOp::Const32, push_home(), 0, 0, 0, uint32_t(in_.imm));
        break;
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
      case Opcode::RefNull:
        emit_def(BcOp::Const32, push_home(), 0, 0, 0, 0);
        break;
      case Opcode::RefIsNull: {
        uint32_t a = pop();
        emit_def(BcOp::RefIsNull, push_home(), a);
        break;
      }
      case Opcode::RefFunc:
        emit_def(BcOp::RefFunc, push_home(), 0, 0, 0, in_.a);
        break;
      case Opcode::MemoryInit: {
        uint32_t n = pop(), s = pop(), d = pop();
        emit(BcOp::MemoryInit, d, s, n, 0, in_.a);
        break;
      }
      case Opcode::DataDrop:
        emit(BcOp::DataDrop, 0, 0, 0, 0, in_.a);
        break;
      case Opcode::MemoryCopy: {
        uint32_t n = pop(), s = pop(), d = pop();
        emit(BcOp::MemoryCopy, d, s, n);
        break;
      }
      case Opcode::MemoryFill: {
        uint32_t n = pop(), v = pop(), d = pop();
        emit(BcOp::MemoryFill, d, v, n);
        break;
      }
      case Opcode::TableInit: {
        uint32_t n = pop(), s = pop(), d = pop();
        emit(BcOp::TableInit, d, s, n, 0, in_.a, in_.b);
        break;
      }
      case Opcode::ElemDrop:
        emit(BcOp::ElemDrop, 0, 0, 0, 0, in_.a);
        break;
      case Opcode::TableCopy: {
        uint32_t n = pop(), s = pop(), d = pop();
        emit(BcOp::TableCopy, d, s, n, 0, in_.a, in_.b);
        break;
      }
      case Opcode::TableGrow: {
        uint32_t n = pop(), v = pop();
        emit(BcOp::TableGrow, push_home(), v, n, 0, in_.a);
        break;
      }
      case Opcode::TableSize:
        emit_def(BcOp::TableSize, push_home(), 0, 0, 0, in_.a);
        break;
      case Opcode::TableFill: {
        uint32_t n = pop(), v = pop(), i = pop();
        emit(BcOp::TableFill, i, v, n, 0, in_.a);
        break;
      }
      default:
        WW_TRY(simple_op(op));
        break;
    }
  }

  if (bad_) return make_error(body.body_end, "cannot translate unvalidated code");
  uint32_t frame = nl_ + max_height_;
  if (frame > limit_) {
    return make_error(body.size_offset, "function " + m_.func_display_name(func_index) +
                                            ": frame of " + std::to_string(frame) +
                                            " slots exceeds the limit of " +
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
