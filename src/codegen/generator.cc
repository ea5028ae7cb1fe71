#include "codegen/generator.h"

#include <algorithm>
#include <cstdio>

#include "bytecode/op_effects.h"
#include "codegen/generator_impl.h"
#include "codegen/nan_blind.h"
#include "intrinsics/gpu_batch.h"

namespace ww::codegen::detail {

std::string hex64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llxull", static_cast<unsigned long long>(v));
  return buf;
}

std::string return_of(uint32_t nresults, const std::function<std::string(uint32_t)>& value) {
  if (nresults == 0) return " return;";
  if (nresults == 1) return " return " + value(0) + ";";
  std::string s = " RetT ret_;";
  for (uint32_t k = 0; k < nresults; ++k) s += " ret_.v[" + std::to_string(k) + "] = " + value(k) + ";";
  return s + " return ret_;";
}

std::string ret_type(uint32_t nresults) {
  if (nresults == 0) return "void";
  if (nresults == 1) return "uint64_t";
  return "Ret<" + std::to_string(nresults) + ">";
}

namespace {
bool is_call(BcOp op) { return op == BcOp::Call || op == BcOp::CallImport || op == BcOp::CallIndirect; }
}  // namespace

// In the sparse layout each access inlines its translation, about ten
// times a dense access's code, and the compiler inlines small functions
// into their callers: past this many accesses in a module, its functions
// grow so large that ptxas spills and takes most of the compile, so there
// misses are calls (gpu::MemAccess). Calls make such a module (a WASI
// greeting's printf, bench/wasi/greet.c, whose compile bench/wasi/run-gpu.sh
// times; examples/python's option.c) compile several times faster and run a
// faster kernel, but slow the kernels of modules with fewer accesses
// (hash-wasm's sha256, bench/gpu/run.sh's hashwasm row, and its crc32).
constexpr uint32_t kMissCallAccesses = 128;

Status Generator::analyse() {
  const uint32_t ndef = uint32_t(m_.funcs.size());
  compiled_ = reachable_functions(cm_, opts_.entries, &referenced_);
  if (!opts_.functions.empty()) {
    if (gpu_) return make_error(kNoOffset, "a unit of a module's functions is compiled for the CPU only");
    compiled_.assign(ndef, false);
    for (uint32_t def : opts_.functions) {
      if (def >= ndef)
        return make_error(kNoOffset, "unit names function " + std::to_string(def) + " of " + std::to_string(ndef) +
                                         " defined functions");
      compiled_[def] = true;
    }
  }
  code_.resize(ndef);
  may_trap_.assign(ndef, false);
  recursive_.assign(ndef, false);
  for (const auto& group : cm_.code.call_graph.recursive_groups)
    for (uint32_t f : group)
      if (f >= nimp_) recursive_[f - nimp_] = true;
  const bool counted_edges = opts_.metered || opts_.deadline;
  global_read_.assign(m_.num_globals(), false);
  global_written_.assign(m_.num_globals(), false);
  uint64_t accesses = 0;
  for (uint32_t def = 0; def < ndef; ++def) {
    if (!compiled_[def]) continue;
    WW_ASSIGN_OR_RETURN(code_[def], decode_function(bc_, def));
    for (const DecodedOp& o : code_[def]) {
      const bool get = o.d.op == BcOp::GlobalGet || o.d.op == BcOp::GlobalGetV128;
      const bool set = o.d.op == BcOp::GlobalSet || o.d.op == BcOp::GlobalSetV128;
      if (get && o.d.i[0] < global_read_.size()) global_read_[o.d.i[0]] = true;
      if (set && o.d.i[0] < global_written_.size()) global_written_[o.d.i[0]] = true;
      accesses += bc_op_memory_accesses(o.d.op);
      const std::string_view body = op_body_text(o.d.op);
      if (body.find("MEM_SIZE") != body.npos || body.find("MEM_PAGES") != body.npos || body.find("MEMV") != body.npos)
        uses_memory_ = true;
      const OpTemplate& t = tmpl_[int(o.d.op)];
      bool back = false;
      if (t.jumps)
        for (const TemplatePiece& p : t.pieces) back |= p.kind == TemplatePiece::Jump && o.d.i[p.index] <= o.pc;
      if (t.traps || is_call(o.d.op) || (back && counted_edges) || (o.d.op == BcOp::BrTable && counted_edges))
        may_trap_[def] = true;
    }
  }
  const bool many = accesses > kMissCallAccesses;
  miss_calls_ = gpu_ && opts_.layout == MemoryLayout::Sparse &&
                (opts_.sparse_misses == SparseMisses::Calls || (opts_.sparse_misses == SparseMisses::BySize && many));
  slots_.assign(ndef, {});
  for (uint32_t def = 0; def < ndef; ++def)
    if (compiled_[def]) slots_[def] = named_slots(m_, bc_, def, code_[def]);
  foreign_refs_ = foreign_refs_possible();
  find_dispatchers();
  analyse_suspension();
  // Entry points: the requested functions, the start function, and every
  // compiled function a reference can reach (the store may call those).
  std::vector<uint32_t> roots = opts_.entries;
  // A unit: the interpreter or another unit may call any of its functions.
  if (!opts_.functions.empty())
    for (uint32_t def : opts_.functions) roots.push_back(nimp_ + def);
  else if (roots.empty())
    for (const Export& e : m_.exports)
      if (e.kind == ExternKind::Func) roots.push_back(e.index);
  if (m_.start) roots.push_back(*m_.start);
  for (uint32_t f : roots)
    if (f >= nimp_ && compiled_[f - nimp_]) entries_.push_back(f - nimp_);
  std::sort(entries_.begin(), entries_.end());
  entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
  return Status::Ok();
}

void Generator::emit_prelude() {
  out_ +=
      "// Generated by wasmwarp from the module's register bytecode; each op's\n"
      "// body is bytecode/ops.def's. Do not edit.\n";
  out_ += "#define WW_METERED " + std::string(opts_.metered ? "1" : "0") + "\n";
  out_ += "#define WW_DEADLINE " + std::string(opts_.deadline ? "1" : "0") + "\n";
  if (gpu_) {
    out_ += "#define WW_LAYOUT ww::gpu::DevLayout(" + std::to_string(int(opts_.layout)) + ")\n";
    // Global rows as the GPU image has them: v128 globals' high words after
    // every global's low word.
    const uint32_t ng = m_.num_globals();
    out_ += "#define WW_NUM_GLOBALS " + std::to_string(m_.has_v128_global() ? 2 * ng : ng) + "\n";
    out_ += "#define WW_GLOBAL_HI_ROW " + std::to_string(ng) + "\n";
  }
  // Split into several units, functions have hidden external linkage so
  // the units link; in one unit they are static, which lets the compiler
  // inline and drop them freely.
  if (split_) out_ += "#define WW_SPLIT 1\n";
  out_ += "#include \"codegen/rt/ww_rt.h\"\n\nnamespace ww::gen {\n";
  if (!split_) out_ += "namespace {\n";
  out_ += "\n";
}

// GPU functions are not inlined above these sizes (ops), smaller for
// functions that may leave for the host (I/O paths, rarely hot): without
// them NVVM inlines wasi-libc's stdio and printf into every caller, and a
// small WASI module's PTX grows many times over and ptxas takes minutes
// over it (bench/wasi/run-gpu.sh times greet.c's compile).
constexpr size_t kGpuNoInlineOps = 100, kGpuNoInlineSuspendingOps = 20;

void Generator::emit_declaration(uint32_t def, const char* end) {
  const uint32_t f = nimp_ + def;
  const size_t ops = code_[def].size();
  if (gpu_ && (ops > kGpuNoInlineOps || (may_suspend_[def] && ops > kGpuNoInlineSuspendingOps)))
    out_ += "__noinline__ ";
  out_ += "WW_FN " + ret_type(nresults(f)) + " f" + std::to_string(def) + "(Inst& I, uint32_t depth";
  for (uint32_t k = 0; k < nparams(f); ++k) out_ += ", uint64_t a" + std::to_string(k);
  out_ += ")";
  out_ += end;
}

std::string Generator::jump(uint32_t target, uint32_t pc) const {
  // A branch to an earlier (or the same) op is a loop's back-edge, which
  // the interpreters count for fuel and the timeout.
  if (target <= pc) return "{ WW_BACK_EDGE(); goto L" + std::to_string(target) + "; }";
  return "goto L" + std::to_string(target);
}

std::string Generator::args_of(uint32_t base, uint32_t n) const {
  std::string s;
  for (uint32_t k = 0; k < n; ++k) s += ", r" + std::to_string(base + k);
  return s;
}

void Generator::emit_results(const std::string& value, uint32_t base, uint32_t n) {
  if (n == 1) out_ += " r" + std::to_string(base) + " = " + value + ";";
  for (uint32_t k = 0; n > 1 && k < n; ++k)
    out_ += " r" + std::to_string(base + k) + " = " + value + ".v[" + std::to_string(k) + "];";
}

void Generator::emit_template(const DecodedOp& o) {
  const OpTemplate& t = tmpl_[int(o.d.op)];
  for (const TemplatePiece& p : t.pieces) {
    switch (p.kind) {
      case TemplatePiece::Text: out_ += p.text; break;
      case TemplatePiece::Slot: out_ += std::to_string(o.d.s[p.index]); break;
      case TemplatePiece::SlotHi: out_ += std::to_string(o.d.s[p.index] + 1); break;
      case TemplatePiece::Imm: out_ += std::to_string(o.d.i[p.index]) + "u"; break;
      case TemplatePiece::Const64: out_ += hex64(bc_.consts[o.d.i[p.index]]); break;
      case TemplatePiece::Const64Hi: out_ += hex64(bc_.consts[o.d.i[p.index] + 1]); break;
      case TemplatePiece::Jump: out_ += jump(o.d.i[p.index], o.pc); break;
      case TemplatePiece::CanonWrite:
        // WF32C -> WF32 where no one can observe the NaN's bits.
        out_ += raw_write_[op_index_] ? p.text.substr(0, p.text.size() - 1) : p.text;
        break;
    }
  }
}

std::string Generator::call_checks(uint32_t callee_def, bool indirect) const {
  std::string guard = "depth >= WW_MAX_DEPTH";
  // Recursion, through direct calls or through a table, stops before the
  // native stack runs out.
  if (!gpu_ && (recursive_[callee_def] || indirect)) guard += " || WW_STACK_LOW()";
  return "if (WW_UNLIKELY(" + guard + ")) TRAP(CallStackExhausted); WW_FUEL_TICK();";
}

// A call of a compiled function: the interpreters' depth check and fuel,
// then the call; a trap in the callee unwinds this function too.
void Generator::emit_direct_call(uint32_t callee_def, uint32_t base) {
  const uint32_t f = nimp_ + callee_def;
  const uint32_t nr = nresults(f);
  // Outside this unit: another unit's entry when one is loaded (tier-up's
  // table of entries), else through the host, as an import is called.
  if (!compiled_[callee_def]) return emit_call_other_unit(callee_def, base);
  out_ += " ";
  const bool suspends = cur_resume_ >= 0 && may_suspend_[callee_def];
  const std::string checks = call_checks(callee_def, false);
  // Rewinding re-enters the call: its checks ran before it left.
  out_ += suspends ? "if (!I.rewinding) { " + checks + " }" : checks;
  std::string call = "f" + std::to_string(callee_def) + "(I, depth + 1" + args_of(base, nparams(f)) + ")";
  emit_call_in_chain(call, nr, suspends);
  if (may_trap_[callee_def]) out_ += " WW_CHECK_TRAP();";
  if (memory_locals()) out_ += " MEM_REFRESH();";
  emit_results("res_", base, nr);
}

void Generator::emit_call_other_unit(uint32_t callee_def, uint32_t base) {
  const uint32_t f = nimp_ + callee_def;
  const uint32_t np = nparams(f), nr = nresults(f);
  out_ += " " + io_array(np, nr, base) + "\n    if (::ww::rt::CpuEntryFn fn_ = I.direct ? __atomic_load_n(&I.direct[" +
          std::to_string(callee_def) +
          "], __ATOMIC_ACQUIRE) : nullptr) {\n      if (WW_UNLIKELY(depth >= WW_MAX_DEPTH || WW_STACK_LOW())) "
          "TRAP(CallStackExhausted); WW_FUEL_TICK();\n      I.depth = depth + 1; fn_(&I, io_); WW_CHECK_TRAP();\n    } "
          "else TRAP_IF(TrapCode(I.api->call_import(&I, " +
          std::to_string(f) + "u, io_, depth)));";
  if (memory_locals()) out_ += " MEM_REFRESH();";
  out_ += io_results(nr, base);
}

void Generator::emit_call_in_chain(const std::string& call, uint32_t nr, bool suspends) {
  const std::string own = std::to_string(slots_[cur_def_].size() + 1);
  if (suspends) out_ += " I.chain += " + own + ";";
  if (nr == 0) out_ += " " + call + ";";
  else out_ += " auto res_ = " + call + ";";
  if (suspends)
    out_ += " I.chain -= " + own + "; if (WW_UNLIKELY(I.leaving)) { resume_id_ = " + std::to_string(cur_resume_) +
            "; goto leave_save_; }";
}

int Generator::intrinsic_of(uint32_t import_func) const {
  uint32_t k = 0;
  for (const Import& im : m_.imports) {
    if (im.kind != ExternKind::Func) continue;
    if (k++ != import_func) continue;
    if (im.module != intrinsics::kModuleName) return -1;
    const intrinsics::IntrinsicInfo* info = intrinsics::find_intrinsic(im.field);
    // The file intrinsics are the host's: on the GPU their calls leave.
    if (info && gpu::intrinsic_on_host(info->id)) return -1;
    return info && info->type == m_.types[im.func_type] ? int(info->id) : -1;
  }
  return -1;
}

std::string Generator::io_array(uint32_t np, uint32_t nr, uint32_t base) const {
  const uint32_t w = out_stride();
  std::string io = "uint64_t io_[" + std::to_string(std::max<uint32_t>(std::max(np, nr) / w, 1)) + "] = {";
  for (uint32_t k = 0; k < np; k += w) io += (k ? ", r" : "r") + std::to_string(base + k);
  return io + "};";
}

std::string Generator::io_results(uint32_t nr, uint32_t base) const {
  const uint32_t w = out_stride();
  std::string out;
  for (uint32_t k = 0; k < nr; k += w)
    out += " r" + std::to_string(base + k) + " = io_[" + std::to_string(k / w) + "];";
  return out;
}

void Generator::emit_call_import(uint32_t func, uint32_t base) {
  const uint32_t np = nparams(func), nr = nresults(func);
  if (host_import(func)) return emit_call_leaving(std::to_string(func) + "u", np, nr, base);
  const std::string io = io_array(np, nr, base);
  if (gpu_) {
    // The `gpu` intrinsics run inline.
    out_ += " WW_FUEL_TICK();";
    out_ += " " + io + " TRAP_IF(gpu::call_intrinsic(" + std::to_string(intrinsic_of(func)) +
            ", [&](uint32_t k) -> uint64_t& { return io_[k]; }, *I.W, *I.In, I.t));";
  } else {
    // The host counts fuel and depth for calls that leave compiled code.
    out_ += " " + io + " TRAP_IF(TrapCode(I.api->call_import(&I, " + std::to_string(func) + "u, io_, depth)));";
    if (memory_locals()) out_ += " MEM_REFRESH();";
  }
  out_ += io_results(nr, base);
}

void Generator::emit_call_leaving(const std::string& slot, uint32_t np, uint32_t nr, uint32_t base) {
  // Runs on the device if it can (dev_imports.cuh), else leaves for the
  // host and resumes here (emit_rewind_prologue).
  const std::string io = io_array(np, nr, base);
  const std::string own = std::to_string(slots_[cur_def_].size() + 1);
  out_ += " " + io +
          "\n    if (WW_UNLIKELY(I.rewinding)) { I.rewinding = false; TRAP_IF(gpu::resume_slots(*I.M, *I.W, I.t, MEMV, "
          "io_)); }" +
          "\n    else { WW_FUEL_TICK(); bool leave_ = false;" +
          " TRAP_IMPORT_IF(gpu::device_import_slots(*I.M, *I.W, *I.In, I.t, " + slot + ", MEMV, io_, &leave_), " +
          slot + ");\n      if (leave_) { if (!gpu::reserve_frames(*I.W, I.chain + " + own +
          ", &I.save_pos)) TRAP(CallStackExhausted); gpu::leave_slots(*I.M, *I.W, I.t, " + slot +
          ", io_); I.leaving = true; resume_id_ = " + std::to_string(cur_resume_) + "; goto leave_save_; } }\n   ";
  if (memory_locals()) out_ += " MEM_REFRESH();";
  out_ += io_results(nr, base);
}

void Generator::emit_op(const DecodedOp& o, uint32_t def) {
  const OpTemplate& t = tmpl_[int(o.d.op)];
  const bool needs_pc = t.traps || t.jumps || t.special;
  out_ += "  {";
  if (needs_pc) out_ += " constexpr uint32_t kPc = " + std::to_string(o.pc) + "u;";
  switch (o.d.op) {
    case BcOp::Return: {
      out_ += return_of(nresults(nimp_ + def), [](uint32_t k) { return "r" + std::to_string(k); });
      break;
    }
    case BcOp::BrTable: {
      const uint32_t start = o.d.i[0], count = o.d.i[1];
      out_ += " switch (uint32_t(r" + std::to_string(o.d.s[0]) + ")) {\n";
      for (uint32_t k = 0; k + 1 < count; ++k)
        out_ += "    case " + std::to_string(k) + "u: " + jump(bc_.br_tables[start + k], o.pc) + ";\n";
      out_ += "    default: " + jump(bc_.br_tables[start + count - 1], o.pc) + ";\n  }";
      break;
    }
    case BcOp::Call: emit_direct_call(o.d.i[0] - nimp_, o.d.s[0]); break;
    case BcOp::CallImport: emit_call_import(o.d.i[0], o.d.s[0]); break;
    case BcOp::CallIndirect: emit_call_indirect(o); break;
    default:
      // As the interpreters expand it: the body, then a semicolon.
      out_ += " ";
      emit_template(o);
      out_ += ";";
      break;
  }
  out_ += " }\n";
}

Status Generator::emit_function(uint32_t def) {
  const uint32_t f = nimp_ + def;
  const FunctionCode& fc = bc_.funcs[def];
  const std::vector<DecodedOp>& ops = code_[def];
  // Branch targets get labels; slots that some op names (slots_) become
  // locals.
  std::vector<bool> label(fc.code_end - fc.code_begin + 1, false);
  for (const DecodedOp& o : ops) {
    const OpTemplate& t = tmpl_[int(o.d.op)];
    for (const TemplatePiece& p : t.pieces)
      if (p.kind == TemplatePiece::Jump) label[o.d.i[p.index]] = true;
    if (o.d.op == BcOp::BrTable)
      for (uint32_t k = 0; k < o.d.i[1]; ++k) label[bc_.br_tables[o.d.i[0] + k]] = true;
  }
  raw_write_ = raw_float_writes(m_, bc_, ops, f);
  cur_def_ = def;
  emit_declaration(def, " {\n");
  out_ += "  typedef " + ret_type(fc.num_results) + " RetT;\n";
  out_ += "  constexpr uint32_t kFn = " + std::to_string(f) + "u;\n";
  if (gpu_)
    out_ += std::string("  [[maybe_unused]] constexpr bool kMissCalls = ") + (miss_calls_ ? "true" : "false") + ";\n";
  if (memory_locals()) out_ += "  WW_MEM_LOCALS\n";
  std::string decl;
  for (uint32_t s : slots_[def]) {
    decl += decl.empty() ? "  uint64_t " : ", ";
    decl += "r" + std::to_string(s) + " = " + (s < fc.num_params ? "a" + std::to_string(s) : "0");
    if (decl.size() > 100) {
      out_ += decl + ";\n";
      decl.clear();
    }
  }
  if (!decl.empty()) out_ += decl + ";\n";
  if (may_suspend_[def]) emit_rewind_prologue(def);
  int resume = 0;
  for (op_index_ = 0; op_index_ < ops.size(); ++op_index_) {
    const DecodedOp& o = ops[op_index_];
    if (label[o.pc]) out_ += "L" + std::to_string(o.pc) + ":;\n";
    cur_resume_ = -1;
    if (may_suspend_[def] && op_suspends(o)) {
      cur_resume_ = resume++;
      out_ += "S" + std::to_string(cur_resume_) + ":;\n";
    }
    emit_op(o, def);
  }
  cur_resume_ = -1;
  // Every path returns or branches before here; this keeps the compiler
  // from reasoning about falling off the end.
  out_ += "  return RetT();\n";
  if (may_suspend_[def]) emit_save_frame(def);
  out_ += "}\n\n";
  return Status::Ok();
}

// Leave and resume, asyncify's way. A call that leaves for the host
// reserves room for the frames of every call in progress (I.chain), writes
// its record, saves its own frame (its slots and which call it was in) and
// returns; each caller, seeing I.leaving, saves its frame and returns, up
// to the kernel. The next launch enters the kernel rewinding: each function
// on the chain restores its frame and jumps back into its call (the calls'
// depth checks and fuel run once, before leaving), down to the call that
// left, which takes the host's results and carries on. Labels and locals
// at function scope make the jumps legal C++; only functions that may
// reach a host call pay for any of it.
void Generator::emit_rewind_prologue(uint32_t def) {
  const std::vector<uint32_t>& sl = slots_[def];
  const std::string k = std::to_string(sl.size());
  out_ += "  uint32_t resume_id_ = 0;\n";
  out_ += "  if (WW_UNLIKELY(I.rewinding)) {\n    constexpr uint32_t kPc = 0u;\n    I.save_pos -= " + k +
          " + 1;\n    const uint64_t* f_ = I.W->hc.frames + I.save_pos;\n   ";
  for (size_t j = 0; j < sl.size(); ++j) out_ += " r" + std::to_string(sl[j]) + " = f_[" + std::to_string(j) + "];";
  out_ += "\n    switch (uint32_t(f_[" + k + "])) {\n";
  uint32_t n = 0;
  for (const DecodedOp& o : code_[def])
    if (op_suspends(o)) {
      out_ += "      case " + std::to_string(n) + "u: goto S" + std::to_string(n) + ";\n";
      ++n;
    }
  out_ += "      default: TRAP(HostError);\n    }\n  }\n";
}

void Generator::emit_save_frame(uint32_t def) {
  const std::vector<uint32_t>& sl = slots_[def];
  out_ += "leave_save_: {\n    uint64_t* f_ = I.W->hc.frames + I.save_pos;\n   ";
  for (size_t j = 0; j < sl.size(); ++j) out_ += " f_[" + std::to_string(j) + "] = r" + std::to_string(sl[j]) + ";";
  out_ += "\n    f_[" + std::to_string(sl.size()) +
          "] = resume_id_;\n    I.save_pos += " + std::to_string(sl.size() + 1) + ";\n    return RetT();\n  }\n";
}

bool Generator::indirect_may_suspend(uint32_t type) const {
  if (foreign_refs_) return true;
  for (uint32_t f = 0; f < nimp_; ++f)
    if (host_import(f) && same_type(type, f)) return true;
  for (uint32_t def = 0; def < compiled_.size(); ++def)
    if (compiled_[def] && may_suspend_[def] && same_type(type, nimp_ + def)) return true;
  return false;
}

bool Generator::op_suspends(const DecodedOp& o) const {
  if (!gpu_) return false;
  switch (o.d.op) {
    case BcOp::CallImport: return host_import(o.d.i[0]);
    case BcOp::Call: return may_suspend_[o.d.i[0] - nimp_];
    case BcOp::CallIndirect: return indirect_may_suspend(o.d.i[0]);
    default: return false;
  }
}

// Which functions may leave for the host, and how many words of frames a
// chain of calls down to a host call may save (the wave loop sizes the
// frame pool from it): the longest chain of suspending calls, with room for
// some recursion where the calls form a cycle.
void Generator::analyse_suspension() {
  const uint32_t ndef = uint32_t(compiled_.size());
  may_suspend_.assign(ndef, false);
  if (!gpu_) return;
  for (bool grew = true; grew;) {
    grew = false;
    for (uint32_t def = 0; def < ndef; ++def) {
      if (!compiled_[def] || may_suspend_[def]) continue;
      for (const DecodedOp& o : code_[def])
        if (op_suspends(o)) {
          may_suspend_[def] = grew = true;
          break;
        }
    }
  }
  std::vector<uint8_t> state(ndef, 0);  // 0 new, 1 on the path, 2 done
  std::vector<uint64_t> longest(ndef, 0);
  bool cyclic = false;
  uint64_t widest = 0;
  // Iterative depth-first search: call chains can be deep.
  for (uint32_t root = 0; root < ndef; ++root) {
    if (!may_suspend_[root] || state[root]) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [def, next] = stack.back();
      const std::vector<DecodedOp>& ops = code_[def];
      bool pushed = false;
      while (next < ops.size() && !pushed) {
        const DecodedOp& o = ops[next++];
        std::vector<uint32_t> callees;
        if (o.d.op == BcOp::Call && may_suspend_[o.d.i[0] - nimp_]) callees.push_back(o.d.i[0] - nimp_);
        if (o.d.op == BcOp::CallIndirect)
          for (uint32_t c = 0; c < ndef; ++c)
            if (compiled_[c] && may_suspend_[c] && same_type(o.d.i[0], nimp_ + c)) callees.push_back(c);
        for (uint32_t c : callees) {
          if (state[c] == 1) cyclic = true;
          else if (state[c] == 2) longest[def] = std::max(longest[def], longest[c]);
          else if (!pushed) {
            state[c] = 1;
            --next;  // this op again once the callee is done
            stack.push_back({c, 0});
            pushed = true;
          }
        }
      }
      if (pushed) continue;
      const uint32_t done = def;
      const uint64_t own = slots_[done].size() + 1;
      widest = std::max(widest, own);
      longest[done] += own;
      state[done] = 2;
      stack.pop_back();
      if (!stack.empty()) longest[stack.back().first] = std::max(longest[stack.back().first], longest[done]);
    }
  }
  for (uint32_t def = 0; def < ndef; ++def) leave_words_ = std::max(leave_words_, longest[def]);
  if (cyclic) leave_words_ += 8 * widest;
}

void Generator::emit_cpu_entries() {
  out_ += "#define WW_EXPORT extern \"C\" __attribute__((visibility(\"default\")))\n";
  for (uint32_t def : entries_) {
    const uint32_t f = nimp_ + def;
    const uint32_t np = nparams(f), nr = nresults(f);
    out_ += "WW_EXPORT uint32_t ww_entry_" + std::to_string(def) +
            "(ww::rt::CpuInst* Ip, uint64_t* slots) {\n  ww::gen::Inst& I = *Ip;\n  ";
    std::string call = "ww::gen::f" + std::to_string(def) + "(I, I.depth";
    for (uint32_t k = 0; k < np; ++k) call += ", slots[" + std::to_string(k) + "]";
    call += ")";
    out_ += nr ? "auto res_ = " + call + ";\n" : call + ";\n";
    out_ += "  if (I.trap) return I.trap;\n";
    if (nr == 1) out_ += "  slots[0] = res_;\n";
    for (uint32_t k = 0; nr > 1 && k < nr; ++k)
      out_ += "  slots[" + std::to_string(k) + "] = res_.v[" + std::to_string(k) + "];\n";
    out_ += "  return 0;\n}\n";
  }
  out_ += "WW_EXPORT const ww::rt::CpuEntry " + std::string(kCpuEntriesSymbol) + "[] = {\n";
  for (uint32_t def : entries_) out_ += "  {" + std::to_string(def) + "u, &ww_entry_" + std::to_string(def) + "},\n";
  if (entries_.empty()) out_ += "  {0u, nullptr},\n";
  out_ += "};\nWW_EXPORT const uint32_t " + std::string(kCpuEntryCountSymbol) + " = " +
          std::to_string(entries_.size()) + "u;\n";
  out_ += "WW_EXPORT const uint32_t " + std::string(kCpuAbiSymbol) + " = ww::rt::kCpuAbiVersion;\n";
}

std::string Generator::gpu_entry_switch(const char* entry, const char* args) const {
  std::string out = "  switch (" + std::string(entry) + ") {\n";
  for (uint32_t def : entries_) {
    const uint32_t f = nimp_ + def;
    const uint32_t np = nparams(f), nr = nresults(f);
    out += "    case " + std::to_string(def) + "u: {\n";
    out += "      if (W.max_depth == 0) { set_trap(I, TrapCode::CallStackExhausted, " + std::to_string(f) +
           "u, 0); break; }\n      ";
    // The wave's argument and result rows are slots, as the frame's
    // (gpu::DevWave::io): a v128 takes two.
    std::string call = "f" + std::to_string(def) + "(I, 1";
    for (uint32_t k = 0; k < np; ++k) call += ", " + std::string(args) + std::to_string(k) + "u, t)";
    call += ")";
    out += nr ? "auto res_ = " + call + ";\n" : call + ";\n";
    if (nr == 1) out += "      if (!I.trap && !I.leaving && last_) W.io[t] = res_;\n";
    for (uint32_t k = 0; nr > 1 && k < nr; ++k)
      out += "      if (!I.trap && !I.leaving && last_) W.io[" + std::to_string(k) + " * N + t] = res_.v[" +
             std::to_string(k) + "];\n";
    out += "      break;\n    }\n";
  }
  out += "    default:\n      set_trap(I, TrapCode::HostError, 0, 0);\n  }\n";
  return out;
}

void Generator::emit_gpu_kernel() {
  // Only the globals the code touches are loaded, and only those it sets
  // are stored back: every other one stays in device memory as it was.
  std::string load_globals, store_globals;
  const uint32_t ng = m_.num_globals();
  for (uint32_t g = 0; g < ng; ++g) {
    for (uint32_t row : {g, ng + g}) {
      if (row != g && m_.global_type(g).type != ValType::V128) continue;
      const std::string k = std::to_string(row);
      if (global_read_[g] || global_written_[g]) load_globals += "  I.g[" + k + "] = W.globals[" + k + " * N + t];\n";
      if (global_written_[g]) store_globals += "  W.globals[" + k + " * N + t] = I.g[" + k + "];\n";
    }
  }
  const std::string params =
      "(const ww::gpu::DevModule& M, const ww::gpu::DevWave& W, const ww::gpu::DevIntrinsics& In, uint32_t t)";
  // The instance from the kernel's parameters, at the start of a launch
  // (or of a host call's resumption).
  const std::string begin =
      "  using namespace ww;\n  using namespace ww::gen;\n"
      "  const uint64_t N = W.n;\n"
      "  Inst I;\n  I.M = &M;\n  I.W = &W;\n  I.In = &In;\n  I.t = t;\n"
      "  I.mem = gpu::MemAccess<WW_LAYOUT>::make(W, t);\n"
      "  I.mem_size = " +
      std::string(uses_memory_ ? "uint64_t(W.mem_pages[t]) * gpu::kDevPageSize" : "0") +
      ";\n"
      "  I.fuel = W.fuel ? W.fuel : ~uint64_t(0);\n"
      "  I.ticks = 0;\n  I.trap = 0;\n  I.trap_func = 0;\n  I.trap_pc = 0;\n  I.stopped = false;\n"
      "  I.leaving = false;\n  I.rewinding = W.hc.resuming;\n  I.chain = 0;\n  I.save_pos = 0;\n"
      "  if (I.rewinding) {\n    I.fuel = W.hc.rs_fuel[t];\n    I.save_pos = W.hc.rs_frames[t];\n  }\n" +
      load_globals;
  // Its end: the globals it set back, and either the state a host call
  // resumes from or the instance finished.
  const std::string end =
      store_globals +
      "  if (I.leaving) {\n    W.hc.rs_frames[t] = I.save_pos;\n    W.hc.rs_fuel[t] = I.fuel;\n    return;\n  }\n"
      "  gpu::finish_instance(W, t, TrapCode(I.trap), I.trap_func, I.trap_pc, !I.stopped);\n";
  // A chain of calls (gpu::DevWave::pos_*) runs in a function of its own,
  // the whole launch of an instance, which loops over the launch's
  // positions: the same loop in the kernel made NVRTC 13.0 crash (SIGSEGV
  // in nvrtcCompileProgram, in about half the compiles of endianness.wast's
  // module), and the kernel of a batch without a chain has no such loop
  // (passing the function the kernel's instance instead would make every
  // kernel hold a copy in its stack frame). Only the last position's
  // results are kept.
  // Its stack frame is at the base, not a recursion level's
  // (nvrtc_compile's trailer).
  out_ += "static __device__ __noinline__ void ww_chain" + params + " {\n" + begin +
          "  uint32_t pos_ = I.rewinding ? W.pos[t] : W.pos_begin;\n"
          "  for (;;) {\n"
          "  const bool last_ = pos_ + 1 == W.pos_total;\n"
          "  const gpu::CallAt at_ = gpu::call_at(W, pos_);\n" +
          gpu_entry_switch("at_.entry", "gpu::call_arg(W, at_, ") +
          "  if (I.trap || I.leaving || I.stopped || ++pos_ >= W.pos_end) break;\n"
          "  I.fuel = W.fuel ? W.fuel : ~uint64_t(0);\n  }\n"
          "  if (I.leaving) W.pos[t] = pos_;\n" +
          end + "}\n\n";
  out_ +=
      "extern \"C\" __global__ void __launch_bounds__(ww::gpu::kBlock) " + std::string(kGpuKernelName) +
      "(const __grid_constant__ ww::gpu::DevModule M, const __grid_constant__ ww::gpu::DevWave W,\n"
      "    const __grid_constant__ ww::gpu::DevIntrinsics In) {\n"
      "  const uint32_t t = ww::gpu::wave_thread(W);\n"
      "  if (t >= W.n) return;\n"
      "  if (W.hc.resuming && !W.hc.waiting[t]) return;  // finished in an earlier launch\n"
      "  if (W.trap[t] != 0) {  // failed before the call, or stopped in a chain's earlier launch\n"
      "    if (W.pos_begin == 0) ww::gpu::finish_instance(W, t, ww::TrapCode::None, 0, 0, true);\n    return;\n  }\n"
      "  if (W.pos_end) {\n    ww_chain(M, W, In, t);\n    return;\n  }\n" +
      begin + "  const bool last_ = true;\n" + gpu_entry_switch("W.entry", "gpu::wave_arg(W, ") + end + "}\n";
}

Result<Generated> Generator::run() {
  WW_TRY(analyse());
  Generated g;
  for (uint32_t def = 0; def < compiled_.size(); ++def)
    if (compiled_[def]) {
      g.compiled.push_back(def);
      // A call_indirect can close a cycle the direct-call graph does not
      // show (call_indirect.wast's runaway recursion through a table).
      g.recursive |= recursive_[def];
      for (const DecodedOp& o : code_[def]) g.recursive |= o.d.op == BcOp::CallIndirect;
    }
  g.entries = entries_;
  g.leave_words = leave_words_;

  // Units of about ops_per_unit ops each, of consecutive functions (the
  // compiler inlines within a unit only). Units compile in parallel and
  // link into one shared object (CPU) or one CUBIN (GPU, nvJitLink).
  uint64_t total_ops = 0;
  for (uint32_t def : g.compiled) total_ops += code_[def].size();
  uint32_t units = 1;
  if (opts_.max_units > 1)
    units = uint32_t(
        std::min<uint64_t>(opts_.max_units, (total_ops + opts_.ops_per_unit - 1) / std::max(opts_.ops_per_unit, 1u)));
  units = std::max<uint32_t>(units, 1);
  split_ = units > 1;
  const uint64_t per_unit = (total_ops + units - 1) / std::max<uint32_t>(units, 1);
  size_t next = 0;
  for (uint32_t u = 0; u < units; ++u) {
    out_.clear();
    emit_prelude();
    for (uint32_t def : g.compiled) emit_declaration(def, ";\n");
    emit_dispatchers(/*definitions=*/false);
    out_ += "\n";
    if (u == 0) emit_dispatchers(/*definitions=*/true);
    uint64_t ops = 0;
    while (next < g.compiled.size() && (ops < per_unit || u + 1 == units)) {
      uint32_t def = g.compiled[next++];
      ops += code_[def].size();
      WW_TRY(emit_function(def));
    }
    out_ += split_ ? "}  // namespace ww::gen\n\n" : "}  // namespace\n}  // namespace ww::gen\n\n";
    if (u == 0) {
      if (gpu_) emit_gpu_kernel();
      else emit_cpu_entries();
    }
    g.units.push_back(std::move(out_));
  }
  g.source = g.units[0];
  for (size_t u = 1; u < g.units.size(); ++u)
    g.source += "\n// ---------------- unit " + std::to_string(u) + " of " + std::to_string(g.units.size()) +
                " (compiled separately)\n" + g.units[u];
  return g;
}

}  // namespace ww::codegen::detail

namespace ww::codegen {

Result<Generated> generate(const CompiledModule& cm, const Options& opts) {
  detail::Generator g(cm, opts);
  return g.run();
}

}  // namespace ww::codegen
