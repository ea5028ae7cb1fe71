// The emission pass's state machine (emit.cc): the operand stack's model,
// the control stack, and the helpers each op's translation uses.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "bytecode/ops.h"
#include "common/byte_reader.h"
#include "translate/internal.h"
#include "translate/op_tables.h"

namespace ww::translate_detail {

inline constexpr uint32_t kNone = ~0u;

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
  // run()'s parts: the function's set-up and its frame at the end, and
  // one op by the kind of what it touches (false: not that kind).
  Status begin_function(uint32_t def, const FunctionManifest& man);
  Status finish_function(uint32_t def, FunctionManifest* man);
  bool skip_dead(Opcode op);
  bool control_op(Opcode op);
  bool state_op(Opcode op);

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
    BcOp cmp = kNoOp;       // kNoOp: test slot a
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
  void emit(BcOp op, uint32_t s0 = 0, uint32_t s1 = 0, uint32_t s2 = 0, uint32_t s3 = 0, uint32_t i0 = 0,
            uint32_t i1 = 0) {
    last_.pc = kNone;
    bc_emit(code_, op, s0 * w_, s1 * w_, s2 * w_, s3 * w_, i0, i1);
  }
  // An op whose s0 is the new top entry's home.
  void emit_def(BcOp op, uint32_t s0, uint32_t s1 = 0, uint32_t s2 = 0, uint32_t s3 = 0, uint32_t i0 = 0) {
    uint32_t pc = uint32_t(code_.size());
    bc_emit(code_, op, s0 * w_, s1 * w_, s2 * w_, s3 * w_, i0);
    last_ = {pc, height() - 1, op};
  }
  // Whether the top entry was produced by the very last op, still at home.
  bool last_made_top() const {
    return last_.pc != kNone && height() > 0 && last_.height == height() - 1 && loc_.back() == home(last_.height) &&
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
  static uint32_t label_arity(const Ctrl& c) { return c.kind == Kind::Loop ? c.nparams : c.nresults; }
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
    if (c.kind == Kind::Func && c.nresults == 1 && last_made_top() && (bc_op_info(last_.op).flags & kDst)) {
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
      if (f == BcFmt::S1T) emit(op, c.a, 0, 0, 0, target);
      else if (f == BcFmt::S2T) emit(op, c.a, c.b, 0, 0, target);
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
      case BlockType::Void:
        *np = 0;
        *nr = 0;
        break;
      case BlockType::Value:
        *np = 0;
        *nr = 1;
        break;
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
  // memory.init/copy/fill, table.init/copy/fill: three operands (where
  // to, from where or what, how many) and the op's immediates.
  void bulk(BcOp op, uint32_t i0 = 0, uint32_t i1 = 0) {
    const uint32_t n = pop(), from = pop(), to = pop();
    emit(op, to, from, n, 0, i0, i1);
  }
  // Index checks that keep the translator memory-safe on input that skipped
  // validation; validated modules always pass them.
  bool plausible(Opcode op) const {
    switch (op) {
      case Opcode::LocalGet:
      case Opcode::LocalSet:
      case Opcode::LocalTee: return in_.a < nl_;
      case Opcode::Br:
      case Opcode::BrIf: return in_.a < ctrl_.size();
      case Opcode::BrTable:
        for (uint32_t t : in_.targets)
          if (t >= ctrl_.size()) return false;
        return true;
      case Opcode::Call: return in_.a < m_.num_funcs() && m_.func_type_index(in_.a) < m_.types.size();
      case Opcode::CallIndirect: return in_.a < m_.types.size();
      case Opcode::Block:
      case Opcode::Loop:
      case Opcode::If: return in_.block.kind != BlockType::Index || in_.block.index < m_.types.size();
      case Opcode::Else: return ctrl_.back().kind == Kind::If;
      default: return true;
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

}  // namespace ww::translate_detail
