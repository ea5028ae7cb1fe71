// call_indirect in generated code. A call site names a table slot; which
// function it holds is known at run time only, so the call is a switch over
// every compiled function of the call's type that a table can hold. That
// switch is emitted once per function type, in a dispatcher function, and
// each call site calls it: written out at every call site, SQLite's
// switches (hundreds of cases, thousands of call sites) would be most of
// its generated GPU source, too large for NVRTC to compile in any
// reasonable time.
#include <algorithm>

#include "codegen/generator_impl.h"

namespace ww::codegen::detail {

bool Generator::foreign_refs_possible() const {
  if (!gpu_) return false;
  for (const Import& im : m_.imports) {
    if (im.kind == ExternKind::Table) return true;
    if (im.kind == ExternKind::Global && im.global.type == ValType::FuncRef) return true;
    if (im.kind == ExternKind::Func)
      for (ValType r : m_.types[im.func_type].results)
        if (r == ValType::FuncRef) return true;
  }
  for (const Export& ex : m_.exports)
    if (ex.kind == ExternKind::Table) return true;
  return false;
}

void Generator::find_dispatchers() {
  const uint32_t nt = uint32_t(m_.types.size());
  type_rep_.assign(nt, 0);
  dispatched_.assign(nt, false);
  for (uint32_t t = 0; t < nt; ++t) {
    uint32_t r = 0;
    while (r < t && !(m_.types[r] == m_.types[t])) ++r;
    type_rep_[t] = r;
  }
  for (uint32_t def = 0; def < compiled_.size(); ++def)
    if (compiled_[def])
      for (const DecodedOp& o : code_[def])
        if (o.d.op == BcOp::CallIndirect && o.d.i[0] < nt) dispatched_[type_rep_[o.d.i[0]]] = true;
}

// A dispatcher takes the caller's trap location (kFn, kPc: the names the
// TRAP macros use), so a trap it raises is reported where the call_indirect
// is, not in the dispatcher.
void Generator::emit_dispatchers(bool definitions) {
  for (uint32_t rep = 0; rep < dispatched_.size(); ++rep) {
    if (!dispatched_[rep]) continue;
    const FuncType& ft = m_.types[rep];
    const uint32_t np = uint32_t(ft.params.size()) * bc_.slot_width;
    const uint32_t nr = uint32_t(ft.results.size()) * bc_.slot_width;
    if (gpu_) out_ += "__noinline__ ";
    out_ += "WW_FN " + ret_type(nr) + " " + dispatcher_name(rep) +
            "(Inst& I, uint32_t depth, uint32_t kFn, uint32_t kPc, uint64_t ref_";
    for (uint32_t k = 0; k < np; ++k) out_ += ", uint64_t a" + std::to_string(k);
    out_ += ")";
    if (!definitions) {
      out_ += ";\n";
      continue;
    }
    out_ += " {\n  typedef " + ret_type(nr) + " RetT;\n";
    std::string args;
    for (uint32_t k = 0; k < np; ++k) args += ", a" + std::to_string(k);
    // On the GPU a reference is a function index + 1; on the CPU a store
    // address + 1, this instance's defined functions being contiguous.
    out_ += gpu_ ? "  switch (uint32_t(ref_ - 1)) {\n" : "  switch (uint32_t(ref_ - 1) - I.func_base) {\n";
    for (uint32_t def = 0; def < compiled_.size(); ++def) {
      const uint32_t f = nimp_ + def;
      if (!compiled_[def] || !referenced_[f] || !(m_.func_type(f) == ft)) continue;
      const std::string checks = call_checks(def, true);
      // A suspending callee is re-entered when its chain rewinds, after
      // its checks ran (emit_direct_call).
      out_ += "    case " + std::to_string(gpu_ ? f : def) +
              "u: " + (gpu_ && may_suspend_[def] ? "if (!I.rewinding) { " + checks + " }" : checks) + " return f" +
              std::to_string(def) + "(I, depth + 1" + args + ");\n";
    }
    if (gpu_) {
      out_ += "    default: TRAP(HostError);\n  }\n}\n\n";
      continue;
    }
    // Another instance's function, or one not compiled: the host checks
    // the signature and calls it.
    out_ += "    default: {\n      uint64_t io_[" + std::to_string(std::max<uint32_t>(std::max(np, nr), 1)) + "] = {";
    for (uint32_t k = 0; k < np; ++k) out_ += (k ? ", a" : "a") + std::to_string(k);
    out_ += "};\n      TRAP_IF(TrapCode(I.api->call_ref(&I, ref_, " + std::to_string(rep) + "u, io_, depth)));\n";
    out_ +=
        "     " + return_of(nr, [](uint32_t k) { return "io_[" + std::to_string(k) + "]"; }) + "\n    }\n  }\n}\n\n";
  }
}

void Generator::emit_call_indirect(const DecodedOp& o) {
  const uint32_t base = o.d.s[0], idx = o.d.s[1], type = o.d.i[0], table = o.d.i[1];
  const uint32_t np = uint32_t(m_.types[type].params.size()) * bc_.slot_width;
  const uint32_t nr = uint32_t(m_.types[type].results.size()) * bc_.slot_width;
  const std::string check = gpu_ ? "gpu::DevSigCheck{I.M, I.M->type_canon[" + std::to_string(type) + "]}" : "AnySig{}";
  out_ += " uint64_t ref_ = 0; TRAP_IF(sem::call_indirect_ref(TABLEV(" + std::to_string(table) + "u), uint32_t(r" +
          std::to_string(idx) + "), " + check + ", &ref_));\n  ";
  const std::string call = dispatcher_name(type) + "(I, depth, kFn, kPc, ref_" + args_of(base, np) + ")";
  auto call_defined = [&] {
    // Any callee may suspend when the op does (cur_resume_): one that
    // cannot never sets I.leaving.
    emit_call_in_chain(call, nr, cur_resume_ >= 0);
    out_ += " WW_CHECK_TRAP();";
    if (memory_locals()) out_ += " MEM_REFRESH();";
    emit_results("res_", base, nr);
  };
  if (!gpu_) {
    out_ += "{";
    call_defined();
    out_ += " }\n";
    return;
  }
  // The GPU: a defined function through the dispatcher; an imported one,
  // or another instance's, here (they may leave for the host).
  out_ += "if (uint32_t(ref_ - 1) - " + std::to_string(nimp_) + "u < " + std::to_string(m_.funcs.size()) + "u) {";
  call_defined();
  out_ += " } else switch (uint32_t(ref_ - 1)) {\n";
  for (uint32_t f = 0; f < nimp_; ++f) {
    if (!same_type(type, f)) continue;
    out_ += "    case " + std::to_string(f) + "u: {";
    emit_call_import(f, base);
    out_ += " break; }\n";
  }
  if (foreign_refs_) {
    // Past the index space: another instance's function, which the host
    // calls (import slot num_imported_funcs + k).
    out_ +=
        "    default: { if (uint32_t(ref_ - 1) < I.M->num_funcs) TRAP(HostError); const uint32_t slot_ = uint32_t(ref_ "
        "- 1) - I.M->num_funcs + " +
        std::to_string(nimp_) + "u;";
    emit_call_leaving("slot_", np, nr, base);
    out_ += " break; }\n  }\n";
    return;
  }
  out_ += "    default: TRAP(HostError);\n  }\n";
}

}  // namespace ww::codegen::detail
