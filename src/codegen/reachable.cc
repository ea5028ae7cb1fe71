// Which of a module's functions compiled code must hold: those its entries
// reach through calls, and those a call_indirect of a reachable function
// can name.
#include "bytecode/ops.h"
#include "codegen/generator.h"

namespace ww::codegen {
namespace {

bool has_ref_in(const ConstExpr& e, uint32_t* f) {
  if (e.instrs.size() == 1 && e.instrs[0].op == Opcode::RefFunc) {
    *f = e.instrs[0].a;
    return true;
  }
  return false;
}

}  // namespace

std::vector<bool> reachable_functions(const CompiledModule& cm, const std::vector<uint32_t>& entries,
                                      std::vector<bool>* referenced_out) {
  const Module& m = cm.module;
  const uint32_t nimp = m.num_imported_funcs;
  std::vector<bool> in(m.funcs.size(), false);
  std::vector<uint32_t> work;
  auto add = [&](uint32_t f) {
    if (f >= nimp && f - nimp < in.size() && !in[f - nimp]) {
      in[f - nimp] = true;
      work.push_back(f - nimp);
    }
  };
  // Functions a reference can name: only a call_indirect of their own type
  // can call them (any other traps), so they join once such a call_indirect
  // is reachable. With a table or global shared with other modules, an
  // exported function can be put in a table from outside too.
  std::vector<bool> referenced(m.num_funcs(), false);
  uint32_t f = 0;
  for (const ElemSegment& seg : m.elems)
    for (const ConstExpr& e : seg.init)
      if (has_ref_in(e, &f) && f < referenced.size()) referenced[f] = true;
  for (const Global& g : m.globals)
    if (has_ref_in(g.init, &f) && f < referenced.size()) referenced[f] = true;
  bool shared = false;
  for (const Import& im : m.imports) shared |= im.kind == ExternKind::Table || im.kind == ExternKind::Global;
  for (const Export& e : m.exports) shared |= e.kind == ExternKind::Table || e.kind == ExternKind::Global;
  for (const Export& e : m.exports)
    if (e.kind == ExternKind::Func && shared && e.index < referenced.size()) referenced[e.index] = true;
  for (const Export& e : m.exports)
    if (e.kind == ExternKind::Func && entries.empty()) add(e.index);
  for (uint32_t e : entries) add(e);
  if (m.start) add(*m.start);

  std::vector<bool> indirect_type(m.types.size(), false);
  bool grew = true;
  while (grew) {
    while (!work.empty()) {
      uint32_t def = work.back();
      work.pop_back();
      for (uint32_t callee : cm.code.manifests[def].callees) add(callee);
      const FunctionCode& fc = cm.code.bytecode.funcs[def];
      for (uint32_t w = fc.code_begin; w < fc.code_end;) {
        BcDecoded d;
        if (!bc_decode(cm.code.bytecode.code.data() + w, fc.code_end - w, &d)) break;
        if (d.op == BcOp::RefFunc && d.i[0] < referenced.size()) referenced[d.i[0]] = true;
        if (d.op == BcOp::CallIndirect && d.i[0] < indirect_type.size()) indirect_type[d.i[0]] = true;
        w += d.words;
      }
    }
    grew = false;
    for (uint32_t g = nimp; g < m.num_funcs(); ++g) {
      if (!referenced[g] || in[g - nimp]) continue;
      const FuncType& ft = m.func_type(g);
      for (uint32_t t = 0; t < m.types.size(); ++t)
        if (indirect_type[t] && m.types[t] == ft) {
          add(g);
          grew = true;
          break;
        }
    }
  }
  if (referenced_out) *referenced_out = std::move(referenced);
  return in;
}

}  // namespace ww::codegen
