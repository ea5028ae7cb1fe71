// The GPU backend of the spec runner. Instances, linking and registration
// are the CPU backend's (a CPU Store per script; instantiation, start
// functions and segments run there). Each invoke of a function the instance
// defines runs on the GPU as a batch of K instances started from the
// instance's current state; instance 0's final state is written back, so
// later commands (and `get`) see the GPU's effects.
//
// Calls of imports, and calls through a table of another instance's
// function, leave the GPU instance and run in the CPU store
// (gpu::HostCallServer), the instance resuming at the call site. What
// cannot run on the GPU runs on the CPU, marked so that the runner counts
// it apart: exports that are another instance's or a host's function (no
// code of this instance to run), and any call that still ends in HostError
// on the GPU. For the latter the instance's state is restored to what it
// was before the GPU run, so the CPU re-run starts from the same state the
// script expects.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "bytecode/ops.h"
#include "compiled/compiled_tier.h"
#include "cpu_backend.h"
#include "exec/gpu/gpu_backend.h"
#include "store/store.h"

namespace ww::spectest {
namespace {

// Limits for the spec's deep recursions (call.wast's even/odd, fac.wast)
// with room to spare; runaway recursion still ends in "call stack
// exhausted", as on the CPU with the same depth limit. Instances own the
// batch engine's small stacks, so the deep ones run on stack segments.
constexpr uint32_t kGpuStackSlots = 1u << 16;
constexpr uint32_t kGpuCallDepth = 20000;
// Linear memory of all K instances of a module that grows its memory:
// enough for memory_grow.wast's 804 pages at K = 64.
constexpr uint64_t kGrowBudgetBytes = 4ull << 30;

// The parts of an instance's state that gpu::write_back replaces.
struct Snapshot {
  bool has_memory = false;
  uint32_t pages = 0;
  decltype(MemoryInst::data) memory;
  std::vector<uint64_t> globals, globals_hi;
  std::vector<std::vector<uint64_t>> tables;
  std::vector<uint8_t> data_dropped;
  std::vector<std::vector<uint64_t>> elem_segments;
};

Snapshot take_snapshot(const StoreImpl& S, uint32_t instance) {
  const InstanceRec& inst = S.instances[instance];
  Snapshot s;
  if (!inst.memories.empty()) {
    const MemoryInst& m = S.memories[inst.memories[0]];
    s.has_memory = true;
    s.pages = m.pages;
    s.memory = m.data;
  }
  for (uint32_t g : inst.globals) {
    s.globals.push_back(S.globals[g].bits);
    s.globals_hi.push_back(S.globals[g].hi);
  }
  for (uint32_t t : inst.tables) s.tables.push_back(S.tables[t].elems);
  s.data_dropped = inst.data_dropped;
  s.elem_segments = inst.elem_segments;
  return s;
}

void restore_snapshot(StoreImpl& S, uint32_t instance, Snapshot&& s) {
  InstanceRec& inst = S.instances[instance];
  if (s.has_memory) {
    MemoryInst& m = S.memories[inst.memories[0]];
    m.pages = s.pages;
    m.data = std::move(s.memory);
  }
  for (size_t g = 0; g < inst.globals.size(); ++g) {
    S.globals[inst.globals[g]].bits = s.globals[g];
    S.globals[inst.globals[g]].hi = s.globals_hi[g];
  }
  for (size_t t = 0; t < inst.tables.size(); ++t) S.tables[inst.tables[t]].elems = std::move(s.tables[t]);
  inst.data_dropped = std::move(s.data_dropped);
  inst.elem_segments = std::move(s.elem_segments);
}

bool uses_memory_grow(const CompiledModule& cm) {
  const auto& code = cm.code.bytecode.code;
  for (size_t pc = 0; pc < code.size();) {
    BcDecoded d;
    // Undecodable bytecode is the GPU image builder's error to report.
    if (!bc_decode(code.data() + pc, code.size() - pc, &d)) return false;
    if (d.op == BcOp::MemoryGrow) return true;
    pc += d.words;
  }
  return false;
}

std::string show_outcome(const gpu::RunResult& r, uint32_t i) {
  const size_t nres = r.result_types.size();
  if (!r.finished[i]) return "did not finish";
  if (r.traps[i] != uint8_t(TrapCode::None)) return std::string("trap \"") + trap_message(TrapCode(r.traps[i])) + "\"";
  std::string s = "(";
  for (size_t k = 0; k < nres; ++k) {
    char buf[64];
    if (r.result_types[k] == ValType::V128)
      std::snprintf(buf, sizeof buf, "%sv128:0x%016llx%016llx", k ? ", " : "",
                    (unsigned long long)r.results_hi[i * nres + k], (unsigned long long)r.results[i * nres + k]);
    else
      std::snprintf(buf, sizeof buf, "%s%s:0x%llx", k ? ", " : "", valtype_name(r.result_types[k]),
                    (unsigned long long)r.results[i * nres + k]);
    s += buf;
  }
  return s + ")";
}

bool same_outcome(const gpu::RunResult& r, uint32_t a, uint32_t b) {
  const size_t nres = r.result_types.size();
  if (r.finished[a] != r.finished[b] || r.traps[a] != r.traps[b]) return false;
  if (r.traps[a] != uint8_t(TrapCode::None)) return true;
  for (size_t k = 0; k < nres; ++k)
    if (r.results[a * nres + k] != r.results[b * nres + k]) return false;
  return r.results_hi.empty() || std::equal(r.results_hi.begin() + a * nres, r.results_hi.begin() + (a + 1) * nres,
                                            r.results_hi.begin() + b * nres);
}

bool imports_functions(const Module& m) {
  for (const Import& im : m.imports)
    if (im.kind == ExternKind::Func) return true;
  return false;
}

// Calls out of a GPU instance into the script's CPU store: a spectest
// function, or another instance's. The store is one thread's.
class StoreCalls final : public gpu::HostCallServer {
 public:
  StoreCalls(Store& store, uint32_t instance) : store_(store), instance_(instance) {}
  bool parallel() const override { return false; }
  void serve(gpu::HostCall& c) override {
    const StoreImpl& S = store_.impl();
    const uint32_t addr = c.foreign_func >= 0 ? uint32_t(c.foreign_func) : S.instances[instance_].funcs[c.func];
    // The record holds one word per value, as invoke_slots takes them: a
    // v128 cannot cross (its high word is not in the record), so such a
    // call ends in HostError and the invoke runs on the CPU.
    c.trap = has_v128(S.types[S.funcs[addr].type_id]) ? TrapCode::HostError : store_.invoke_slots(addr, c.io);
  }

 private:
  Store& store_;
  const uint32_t instance_;
};

class GpuBackend final : public CpuBackend {
 public:
  explicit GpuBackend(const BackendOptions& opts) : CpuBackend(opts, false) {}

  const char* name() const override { return "gpu"; }

  void reset() override {
    CpuBackend::reset();
    // The modules of the last script are gone; their addresses may return.
    grows_.clear();
    launchers_.clear();
    launcher_modules_.clear();
  }

  ActionOutcome invoke(uint32_t instance, const std::string& field, const std::vector<Value>& args) override {
    ActionOutcome out;
    uint32_t addr = 0;
    if (!resolve_invoke(instance, field, args, addr, out)) return out;
    StoreImpl& S = store().impl();
    const FuncInst& f = S.funcs[addr];
    if (f.instance != instance) {
      out = invoke_on_cpu(addr, args);
      out.ran_on_cpu = f.instance == kHostInstance
                           ? "the export is a host function"
                           : "the export is an imported function of another instance (re-export)";
      return out;
    }

    const InstanceRec& inst = S.instances[instance];
    const BackendOptions& o = options();
    gpu::BatchRequest req;
    req.module = inst.module;
    req.func_index = inst.module->module.num_imported_funcs + f.defined_index;
    // A call out runs once per instance: with side effects on another
    // instance, only one instance may make it.
    const bool calls_out = imports_functions(inst.module->module);
    req.instances = calls_out ? 1 : o.gpu_instances;
    StoreCalls calls(store(), instance);
    req.host_calls = &calls;
    for (const Value& a : args) {
      req.args.push_back(a.bits);
      req.args_hi.push_back(a.hi);
    }
    req.fuel = o.fuel;
    req.stack_slots_limit = o.stack_slots ? o.stack_slots : kGpuStackSlots;
    req.call_depth_limit = o.max_call_depth ? o.max_call_depth : kGpuCallDepth;
    req.stack_slots = std::min(req.stack_slots, req.stack_slots_limit);
    req.max_call_depth = std::min(req.max_call_depth, req.call_depth_limit);
    req.memory_pages = memory_pages(S, inst);
    req.layout = o.gpu_layout;
    req.max_table_size = o.max_table_size;
    req.source_store = &store();
    req.source_instance = instance;
    req.write_back = true;
    if (o.compiled) {
      req.launcher = launcher_for(inst.module);
      note_tier(req.launcher ? "invoke: compiled GPU code"
                             : "invoke: GPU interpreter (the module has no compiled code)");
    }

    Snapshot before = take_snapshot(S, instance);
    auto r = gpu::run_batch(req);
    if (!r.ok()) {
      // A CUDA error or a batch that does not fit is this backend failing,
      // not something to hide behind a CPU run.
      out.kind = ActionOutcome::Kind::Error;
      out.message = "GPU batch failed: " + r.error().message;
      return out;
    }
    const gpu::RunResult& R = *r;
    for (uint32_t i = 1; i < req.instances; ++i) {
      if (!same_outcome(R, 0, i)) {
        out.kind = ActionOutcome::Kind::Error;
        out.message = "GPU instances disagree: instance 0 gave " + show_outcome(R, 0) + ", instance " +
                      std::to_string(i) + " gave " + show_outcome(R, i);
        return out;
      }
    }
    if (!R.finished[0]) {
      out.kind = ActionOutcome::Kind::Error;
      out.message = "GPU instance did not finish (" + show_outcome(R, 0) + ")";
      return out;
    }
    const TrapCode trap = TrapCode(R.traps[0]);
    if (trap == TrapCode::HostError) {
      // Undo the write-back: the GPU result is not kept.
      restore_snapshot(S, instance, std::move(before));
      out = invoke_on_cpu(addr, args);
      out.ran_on_cpu = "calls a non-gpu import or another instance's function (HostError on the GPU)";
      return out;
    }
    if (trap != TrapCode::None) {
      out.kind = ActionOutcome::Kind::Trap;
      out.trap = trap;
      out.message = trap_message(trap);
      return out;
    }
    const size_t nres = R.result_types.size();
    for (size_t k = 0; k < nres; ++k)
      out.results.push_back({R.result_types[k], R.results[k], R.results_hi.empty() ? 0 : R.results_hi[k]});
    return out;
  }

 private:
  // Linear-memory capacity per GPU instance: the current size, or for a
  // module that grows its memory as much as the budget allows up to the
  // memory's own maximum (growth past the capacity fails, which the CPU
  // would allow: the budget covers every growth the suite asks for).
  uint32_t memory_pages(const StoreImpl& S, const InstanceRec& inst) {
    if (inst.memories.empty()) return 0;
    const MemoryInst& m = S.memories[inst.memories[0]];
    auto [it, fresh] = grows_.try_emplace(inst.module.get(), false);
    if (fresh) it->second = uses_memory_grow(*inst.module);
    if (!it->second) return m.pages;
    uint64_t budget = kGrowBudgetBytes / kPageSize / std::max<uint32_t>(options().gpu_instances, 1);
    uint64_t pages = std::max<uint64_t>(budget, uint64_t(m.pages) + 16);
    pages = std::min<uint64_t>(pages, m.max_pages);
    return uint32_t(std::max<uint64_t>(pages, m.pages));
  }

  // The module's compiled kernel (every export), once per script.
  std::shared_ptr<gpu::KernelLauncher> launcher_for(const std::shared_ptr<const CompiledModule>& cm) {
    auto it = launchers_.find(cm.get());
    if (it != launchers_.end()) return it->second;
    compiled::Request req;
    req.module = cm;
    req.target = compiled::Target::Gpu;
    req.metered = options().fuel != 0;
    req.layout = options().gpu_layout;
    req.cache = options().cache;
    auto r = compiled::compile_gpu(req, nullptr);
    std::shared_ptr<gpu::KernelLauncher> l;
    if (r.ok()) l = *r;
    else note_tier("module not compiled: " + r.error().message);
    launcher_modules_.push_back(cm);
    launchers_[cm.get()] = l;
    return l;
  }

  // Keyed by module: the store holds every module of the script alive.
  std::map<const CompiledModule*, bool> grows_;
  std::map<const CompiledModule*, std::shared_ptr<gpu::KernelLauncher>> launchers_;
  std::vector<std::shared_ptr<const CompiledModule>> launcher_modules_;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(const BackendOptions& opts) { return std::make_unique<GpuBackend>(opts); }

bool gpu_available(std::string& why) {
  gpu::DeviceInfo d = gpu::probe_device();
  if (!d.available) why = d.reason;
  return d.available;
}

}  // namespace ww::spectest
