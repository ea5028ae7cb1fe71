// The CPU backend: one ww::Store per script, the interpreter runs actions.
#include "cpu_backend.h"

#include "compiled/compiled_tier.h"

#include <bit>
#include <optional>
#include <string_view>
#include <utility>

namespace ww::spectest {

CpuBackend::CpuBackend(const BackendOptions& opts, bool native) : opts_(opts), native_tier_(native) { reset(); }

void CpuBackend::reset() {
  StoreLimits limits;
  limits.fuel = opts_.fuel;
  if (opts_.max_call_depth != 0) limits.max_call_depth = opts_.max_call_depth;
  if (opts_.stack_slots != 0) limits.stack_slots = opts_.stack_slots;
  if (opts_.max_memory_pages != 0) limits.max_memory_pages = opts_.max_memory_pages;
  if (opts_.max_table_size != 0) limits.max_table_size = opts_.max_table_size;
  registered_.clear();
  native_.clear();
  native_modules_.clear();
  tiers_.clear();
  // The old store goes first: its host functions may hold nothing of ours,
  // but two live stores would double the memory of big scripts.
  store_.reset();
  store_ = std::make_unique<Store>(limits);
  registered_["spectest"] = make_spectest_exports(*store_);
  if (opts_.compiled && native_tier_)
    store_->impl().native_for = [this](const std::shared_ptr<const CompiledModule>& cm) { return native_for(cm); };
}

std::shared_ptr<const NativeCode> CpuBackend::native_for(const std::shared_ptr<const CompiledModule>& cm) {
  auto it = native_.find(cm.get());
  if (it != native_.end()) return it->second;
  compiled::Request req;
  req.module = cm;
  req.target = compiled::Target::Cpu;
  req.metered = opts_.fuel != 0;
  req.cache = opts_.cache;
  if (opts_.mixed_seed) {
    req.functions = compiled::mixed_split(*cm, opts_.mixed_seed);
    if (req.functions.empty()) {
      // Nothing on the compiled side of this module's split.
      note_tier("module: every function on the interpreted side of the split");
      native_modules_.push_back(cm);
      native_[cm.get()] = nullptr;
      return nullptr;
    }
  }
  auto r = compiled::compile_cpu(req, nullptr);
  std::shared_ptr<const NativeCode> code;
  if (r.ok()) code = *r;
  else note_tier("module not compiled: " + r.error().message);
  native_modules_.push_back(cm);
  native_[cm.get()] = code;
  return code;
}

InstantiateOutcome CpuBackend::instantiate(std::shared_ptr<const CompiledModule> m) {
  InstantiateOutcome out;
  std::vector<ExternVal> imports;
  imports.reserve(m->module.imports.size());
  for (const Import& imp : m->module.imports) {
    auto mod = registered_.find(imp.module);
    std::optional<ExternVal> ev;
    if (mod != registered_.end()) {
      auto f = mod->second.find(imp.field);
      if (f != mod->second.end()) ev = f->second;
    }
    if (!ev) {
      out.kind = InstantiateOutcome::Kind::Unlinkable;
      out.message = "unknown import \"" + imp.module + "\" \"" + imp.field + "\"";
      return out;
    }
    imports.push_back(*ev);
  }
  auto r = store_->instantiate(std::move(m), imports);
  if (auto* inst = std::get_if<uint32_t>(&r)) {
    out.instance = *inst;
    return out;
  }
  const auto& err = std::get<InstantiateError>(r);
  out.kind = err.kind == InstantiateErrorKind::Unlinkable ? InstantiateOutcome::Kind::Unlinkable
                                                          : InstantiateOutcome::Kind::Trap;
  out.message = err.message;
  return out;
}

void CpuBackend::register_instance(uint32_t instance, const std::string& as) {
  // Registration snapshots the export list; the entities themselves are
  // shared, so later mutations through either name stay visible.
  Exports ex;
  for (const Export& e : store_->instance_module(instance).module.exports) {
    if (auto ev = store_->get_export(instance, e.name)) ex[e.name] = *ev;
  }
  registered_[as] = std::move(ex);
}

bool CpuBackend::resolve_invoke(uint32_t instance, const std::string& field, const std::vector<Value>& args,
                                uint32_t& func_addr, ActionOutcome& err) const {
  auto ev = store_->get_export(instance, field);
  if (!ev || ev->kind != ExternKind::Func) {
    err.kind = ActionOutcome::Kind::Error;
    err.message = "no exported function \"" + field + "\"";
    return false;
  }
  const FuncType& ft = store_->func_type(ev->addr);
  if (ft.params.size() != args.size()) {
    err.kind = ActionOutcome::Kind::Error;
    err.message = "\"" + field + "\" takes " + std::to_string(ft.params.size()) + " arguments, script gives " +
                  std::to_string(args.size());
    return false;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (ft.params[i] != args[i].type) {
      err.kind = ActionOutcome::Kind::Error;
      err.message = "argument " + std::to_string(i) + " of \"" + field + "\" is " + valtype_name(ft.params[i]) +
                    ", script gives " + valtype_name(args[i].type);
      return false;
    }
  }
  func_addr = ev->addr;
  return true;
}

ActionOutcome CpuBackend::invoke_on_cpu(uint32_t func_addr, const std::vector<Value>& args) {
  ActionOutcome out;
  InvokeResult r = store_->invoke(func_addr, args);
  if (!r.ok()) {
    out.kind = ActionOutcome::Kind::Trap;
    out.message = trap_message(r.trap);
    out.trap = r.trap;
    return out;
  }
  out.results = std::move(r.results);
  return out;
}

ActionOutcome CpuBackend::invoke(uint32_t instance, const std::string& field, const std::vector<Value>& args) {
  ActionOutcome err;
  uint32_t addr = 0;
  if (!resolve_invoke(instance, field, args, addr, err)) return err;
  if (opts_.compiled && native_tier_) {
    // What will run it: the instance's compiled code, or why not.
    const StoreImpl& S = store_->impl();
    const FuncInst& f = S.funcs[addr];
    if (f.instance == kHostInstance) note_tier("invoke: a host function");
    else if (S.instances[f.instance].native && S.instances[f.instance].native->has(S, f.defined_index))
      note_tier(opts_.mixed_seed ? "invoke: compiled side of the split" : "invoke: compiled code");
    else if (opts_.mixed_seed) note_tier("invoke: interpreted side of the split");
    else note_tier("invoke: interpreter (the module has no compiled code)");
  }
  return invoke_on_cpu(addr, args);
}

ActionOutcome CpuBackend::get(uint32_t instance, const std::string& field) {
  ActionOutcome out;
  auto ev = store_->get_export(instance, field);
  if (!ev || ev->kind != ExternKind::Global) {
    out.kind = ActionOutcome::Kind::Error;
    out.message = "no exported global \"" + field + "\"";
    return out;
  }
  out.results.push_back(store_->global_get(ev->addr));
  return out;
}

CpuBackend::Exports CpuBackend::make_spectest_exports(Store& store) {
  Exports ex;
  auto print = [&](const char* name, std::vector<ValType> params) {
    FuncType t{std::move(params), {}};
    ex[name] = {ExternKind::Func, store.add_host_func(t, [](Store&, uint64_t*) { return TrapCode::None; })};
  };
  print("print", {});
  print("print_i32", {ValType::I32});
  print("print_i64", {ValType::I64});
  print("print_f32", {ValType::F32});
  print("print_f64", {ValType::F64});
  print("print_i32_f32", {ValType::I32, ValType::F32});
  print("print_f64_f64", {ValType::F64, ValType::F64});

  ex["global_i32"] = {ExternKind::Global, store.add_global({ValType::I32, false}, 666)};
  ex["global_i64"] = {ExternKind::Global, store.add_global({ValType::I64, false}, 666)};
  ex["global_f32"] = {ExternKind::Global, store.add_global({ValType::F32, false}, std::bit_cast<uint32_t>(666.6f))};
  ex["global_f64"] = {ExternKind::Global, store.add_global({ValType::F64, false}, std::bit_cast<uint64_t>(666.6))};

  TableType table;
  table.elem = ValType::FuncRef;
  table.limits = {10, 20};
  ex["table"] = {ExternKind::Table, store.add_table(table)};

  MemoryType mem;
  mem.limits = {1, 2};
  ex["memory"] = {ExternKind::Memory, store.add_memory(mem)};
  return ex;
}

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& opts) { return std::make_unique<CpuBackend>(opts); }

}  // namespace ww::spectest
