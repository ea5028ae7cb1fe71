#include "codegen/function_ops.h"

#include <algorithm>
#include <string>

#include "codegen/op_templates.h"

namespace ww::codegen {

Result<std::vector<DecodedOp>> decode_function(const BytecodeModule& bc, uint32_t def) {
  const FunctionCode& fc = bc.funcs[def];
  std::vector<DecodedOp> ops;
  for (uint32_t w = fc.code_begin; w < fc.code_end;) {
    DecodedOp o;
    if (!bc_decode(bc.code.data() + w, fc.code_end - w, &o.d))
      return make_error(kNoOffset, "codegen: undecodable bytecode at word " + std::to_string(w));
    o.pc = w - fc.code_begin;
    w += o.d.words;
    ops.push_back(o);
  }
  return ops;
}

SlotEffects slot_effects(const Module& m, const DecodedOp& o, uint32_t func_index) {
  SlotEffects e;
  auto frame_of = [&](const FuncType& t) { return uint32_t(std::max(t.params.size(), t.results.size())); };
  switch (o.d.op) {
    case BcOp::Call:
    case BcOp::CallImport: e.reads.push_back({o.d.s[0], frame_of(m.func_type(o.d.i[0]))}); return e;
    case BcOp::CallIndirect:
      e.reads.push_back({o.d.s[0], frame_of(m.types[o.d.i[0]])});
      e.reads.push_back({o.d.s[1], 1});
      return e;
    case BcOp::Return: e.reads.push_back({0, uint32_t(m.func_type(func_index).results.size())}); return e;
    default: break;
  }
  const BcOpInfo& info = bc_op_info(o.d.op);
  const BcFmtInfo& fi = bc_fmt_info(info.fmt);
  const bool dst = info.flags & kDst;
  for (uint32_t k = dst ? 1 : 0; k < fi.nslots; ++k) e.reads.push_back({o.d.s[k], 1});
  if (dst) e.writes = o.d.s[0];
  return e;
}

void branch_targets(const BytecodeModule& bc, const DecodedOp& o, std::vector<uint32_t>& out) {
  if (o.d.op == BcOp::BrTable) {
    for (uint32_t k = 0; k < o.d.i[1]; ++k) out.push_back(bc.br_tables[o.d.i[0] + k]);
    return;
  }
  const OpTemplate& t = op_templates()[int(o.d.op)];
  for (const TemplatePiece& p : t.pieces)
    if (p.kind == TemplatePiece::Jump) out.push_back(o.d.i[p.index]);
}

bool falls_through(BcOp op) {
  return op != BcOp::Br && op != BcOp::BrTable && op != BcOp::Return && op != BcOp::Unreachable;
}

std::vector<uint32_t> named_slots(const Module& m, const BytecodeModule& bc, uint32_t def,
                                  const std::vector<DecodedOp>& ops) {
  const FunctionCode& fc = bc.funcs[def];
  const uint32_t w = bc.slot_width;  // a v128 operand names its slot and the next
  std::vector<bool> used(fc.frame_slots + 1, false);
  auto use = [&](uint32_t s, uint32_t n) {
    if (s + n > used.size()) used.resize(s + n, false);
    for (uint32_t k = 0; k < n; ++k) used[s + k] = true;
  };
  use(0, std::max(fc.num_locals, fc.num_results));
  for (const DecodedOp& o : ops) {
    const BcFmtInfo& fi = bc_fmt_info(bc_op_info(o.d.op).fmt);
    for (uint32_t k = 0; k < fi.nslots; ++k) use(o.d.s[k], w);
    if (o.d.op == BcOp::Call || o.d.op == BcOp::CallImport) {
      const FuncType& ft = m.func_type(o.d.i[0]);
      use(o.d.s[0], uint32_t(std::max(ft.params.size(), ft.results.size())) * w);
    } else if (o.d.op == BcOp::CallIndirect) {
      use(o.d.s[0], uint32_t(std::max(m.types[o.d.i[0]].params.size(), m.types[o.d.i[0]].results.size())) * w);
    }
  }
  std::vector<uint32_t> out;
  for (uint32_t s = 0; s < used.size(); ++s)
    if (used[s]) out.push_back(s);
  return out;
}

}  // namespace ww::codegen
