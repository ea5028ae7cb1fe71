// ww::Store: allocation of host-made entities, accessors, and invoke.
#include "store/store.h"

#include <algorithm>

#include "exec/cpu/interpreter.h"
#include "runtime/store_internal.h"

namespace ww {

uint64_t new_store_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Store::Store(StoreLimits limits) : impl_(std::make_unique<StoreImpl>()) { impl_->limits = limits; }
Store::~Store() = default;

uint32_t Store::add_host_func(const FuncType& type, HostFunc fn) {
  FuncInst f;
  f.type_id = impl_->intern_type(type);
  f.instance = kHostInstance;
  f.host = std::move(fn);
  impl_->funcs.push_back(std::move(f));
  return uint32_t(impl_->funcs.size() - 1);
}

uint32_t Store::add_table(const TableType& type, uint64_t init_ref) {
  TableInst t;
  t.type = type;
  t.elems.assign(size_t(std::min<uint64_t>(type.limits.min, impl_->limits.max_table_size)), init_ref);
  impl_->tables.push_back(std::move(t));
  return uint32_t(impl_->tables.size() - 1);
}

uint32_t Store::add_memory(const MemoryType& type) {
  MemoryInst m;
  if (!detail::init_memory(impl_->limits, type, m)) {
    // The embedder asked for more than the store's cap: it gets the cap,
    // and memory_type() shows what it got.
    MemoryType capped = type;
    capped.limits.min = impl_->limits.max_memory_pages;
    (void)detail::init_memory(impl_->limits, capped, m);
  }
  impl_->memories.push_back(std::move(m));
  return uint32_t(impl_->memories.size() - 1);
}

uint32_t Store::add_global(const GlobalType& type, uint64_t bits) {
  impl_->globals.push_back(GlobalInst{type, detail::normalize_bits(type.type, bits)});
  return uint32_t(impl_->globals.size() - 1);
}

std::optional<ExternVal> Store::get_export(uint32_t instance, std::string_view name) const {
  if (instance >= impl_->instances.size()) return std::nullopt;
  const InstanceRec& inst = impl_->instances[instance];
  for (const Export& e : inst.module->module.exports) {
    if (e.name != name) continue;
    const std::vector<uint32_t>* space = nullptr;
    switch (e.kind) {
      case ExternKind::Func: space = &inst.funcs; break;
      case ExternKind::Table: space = &inst.tables; break;
      case ExternKind::Memory: space = &inst.memories; break;
      case ExternKind::Global: space = &inst.globals; break;
    }
    if (!space || e.index >= space->size()) return std::nullopt;
    return ExternVal{e.kind, (*space)[e.index]};
  }
  return std::nullopt;
}

const CompiledModule& Store::instance_module(uint32_t instance) const { return *impl_->instances.at(instance).module; }

void Store::release_instance_storage(uint32_t instance) {
  StoreImpl& s = *impl_;
  if (instance >= s.instances.size()) return;
  InstanceRec& rec = s.instances[instance];
  const Module& m = rec.module->module;
  for (size_t k = m.num_imported_memories; k < rec.memories.size(); ++k) {
    decltype(MemoryInst::data)().swap(s.memories[rec.memories[k]].data);
    std::vector<uint8_t>().swap(s.memories[rec.memories[k]].written);
    s.memories[rec.memories[k]].pages = 0;
  }
  for (size_t k = m.num_imported_tables; k < rec.tables.size(); ++k)
    std::vector<uint64_t>().swap(s.tables[rec.tables[k]].elems);
  std::vector<std::vector<uint64_t>>().swap(rec.elem_segments);
}

const TrapInfo& Store::last_trap() const { return impl_->last_trap; }

const FuncType& Store::func_type(uint32_t func_addr) const { return impl_->types[impl_->funcs.at(func_addr).type_id]; }

TableType Store::table_type(uint32_t table_addr) const {
  const TableInst& t = impl_->tables.at(table_addr);
  TableType r = t.type;
  r.limits.min = t.elems.size();
  return r;
}

MemoryType Store::memory_type(uint32_t mem_addr) const {
  const MemoryInst& m = impl_->memories.at(mem_addr);
  MemoryType r;
  r.limits.min = m.pages;
  r.limits.max = m.declared_max;
  return r;
}

GlobalType Store::global_type(uint32_t global_addr) const { return impl_->globals.at(global_addr).type; }

Value Store::global_get(uint32_t global_addr) const {
  const GlobalInst& g = impl_->globals.at(global_addr);
  return Value{g.type.type, g.bits, g.hi};
}

uint8_t* Store::memory_data(uint32_t mem_addr) { return impl_->memories.at(mem_addr).data.data(); }

uint64_t Store::memory_size_bytes(uint32_t mem_addr) const { return impl_->memories.at(mem_addr).data.size(); }

namespace detail {

uint64_t normalize_bits(ValType t, uint64_t bits) {
  // i32/f32 live in the low half of a slot; callers may hand over garbage
  // above it (a sign-extended int32_t, say), which must not leak into
  // results compared bit for bit.
  return (t == ValType::I32 || t == ValType::F32) ? (bits & 0xffffffffu) : bits;
}

bool init_memory(const StoreLimits& limits, const MemoryType& type, MemoryInst& m) {
  uint64_t cap = std::min<uint64_t>(kMaxPages, limits.max_memory_pages);
  if (type.limits.min > cap) return false;
  m.pages = uint32_t(type.limits.min);
  m.declared_max = type.limits.max;
  m.max_pages = uint32_t(std::min<uint64_t>(type.limits.max.value_or(kMaxPages), cap));
  try {
    m.resize_pages(uint32_t(type.limits.min));
  } catch (const std::exception&) {
    m.pages = 0;
    m.data.clear();
    m.written.clear();
    return false;
  }
  return true;
}

bool ensure_stack(StoreImpl& s) {
  if (!s.stack.empty()) return true;
  try {
    s.stack.allocate(std::max<uint32_t>(s.limits.stack_slots, 1));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

namespace {

// A call's frame on the stack around `enter(slots)`, which runs the callee:
// `w` slots per value (the callee's slot width).
template <class Enter>
TrapCode call_framed(StoreImpl& s, size_t num_params, size_t num_results, uint32_t w, const uint64_t* args,
                     uint64_t* results, const uint64_t* args_hi, uint64_t* results_hi, Enter&& enter) {
  if (!ensure_stack(s)) return TrapCode::CallStackExhausted;
  // A top-level call starts at the bottom of the stack; a call made from
  // inside a host function goes above every live frame.
  const bool nested = s.depth > 0;
  const uint32_t base = nested ? s.stack_top : 0;
  const size_t need = std::max(num_params, num_results) * w;
  if (base > s.stack.size() || s.stack.size() - base < need) {
    s.last_trap = TrapInfo{TrapCode::CallStackExhausted, 0, 0};
    return TrapCode::CallStackExhausted;
  }
  uint64_t* slots = s.stack.data() + base;
  for (size_t i = 0; i < num_params; ++i) {
    slots[i * w] = args[i];
    if (w == 2) slots[i * 2 + 1] = args_hi ? args_hi[i] : 0;
  }

  const uint32_t saved_depth = s.depth, saved_top = s.stack_top;
  if (!nested) s.fuel_left = s.limits.fuel;
  // Host functions called directly from here (not from wasm code, where the
  // interpreter sets it) must also find the first free slot.
  s.stack_top = uint32_t(base + need);
  s.last_trap = TrapInfo{};
  TrapCode trap = enter(slots);
  // A trap unwinds every frame of this call at once; the interpreter may
  // not have had the chance to restore these.
  s.depth = saved_depth;
  s.stack_top = saved_top;
  if (trap != TrapCode::None) {
    s.last_trap.code = trap;
    return trap;
  }
  for (size_t i = 0; results && i < num_results; ++i) {
    results[i] = slots[i * w];
    if (results_hi) results_hi[i] = w == 2 ? slots[i * 2 + 1] : 0;
  }
  return TrapCode::None;
}

}  // namespace

TrapCode call(StoreImpl& s, Store& api, uint32_t func_addr, const uint64_t* args, uint64_t* results,
              const uint64_t* args_hi, uint64_t* results_hi) {
  const FuncType& type = s.types[s.funcs[func_addr].type_id];
  // `type` may dangle after the call (a host function may add types).
  return call_framed(s, type.params.size(), type.results.size(), slot_width_of(s, func_addr), args, results, args_hi,
                     results_hi, [&](uint64_t* slots) { return cpu_call(s, api, func_addr, slots); });
}

}  // namespace detail

struct Store::PreparedCall {
  uint32_t func_addr = 0;
  uint32_t width = 1;
  std::vector<ValType> params, results;
  std::unique_ptr<NativeEntry> entry;  // null: through cpu_call
};

std::shared_ptr<Store::PreparedCall> Store::prepare_call(uint32_t func_addr) {
  StoreImpl& s = *impl_;
  if (func_addr >= s.funcs.size()) return nullptr;
  auto p = std::make_shared<PreparedCall>();
  p->func_addr = func_addr;
  p->width = slot_width_of(s, func_addr);
  const FuncType& type = s.types[s.funcs[func_addr].type_id];
  p->params = type.params;
  p->results = type.results;
  const FuncInst& f = s.funcs[func_addr];
  if (f.instance != kHostInstance)
    if (const auto& native = s.instances[f.instance].native)
      p->entry = native->bind(s, *this, f.instance, f.defined_index);  // null where has() says no
  return p;
}

// The chain invoke_slots -> call -> cpu_call -> NativeCode::call, with its
// lookups of the function's type, slot width and instance at every step,
// would be a large share of what a batch spends per input around
// hash-wasm's crc32 (bench/hashwasm/run-cpu.sh).
TrapCode Store::invoke_slots(PreparedCall& p, uint64_t* io, uint64_t* io_hi) {
  StoreImpl& s = *impl_;
  // The entry keeps one host context: only a top-level call may use it, so
  // that a host function invoking the same function meanwhile cannot
  // overwrite the context of the call under way.
  const TrapCode t =
      detail::call_framed(s, p.params.size(), p.results.size(), p.width, io, io, io_hi, io_hi, [&](uint64_t* slots) {
        return p.entry && s.depth == 0 ? p.entry->call(slots) : cpu_call(s, *this, p.func_addr, slots);
      });
  if (t != TrapCode::None) return t;
  for (size_t k = 0; k < p.results.size(); ++k) io[k] = detail::normalize_bits(p.results[k], io[k]);
  return TrapCode::None;
}

TrapCode Store::invoke_slots(uint32_t func_addr, uint64_t* io, uint64_t* io_hi) {
  StoreImpl& s = *impl_;
  if (func_addr >= s.funcs.size()) {
    s.last_trap = TrapInfo{TrapCode::HostError, 0, 0};
    return TrapCode::HostError;
  }
  const FuncType& type = s.types[s.funcs[func_addr].type_id];
  const size_t nr = type.results.size();
  TrapCode t = detail::call(s, *this, func_addr, io, io, io_hi, io_hi);
  if (t != TrapCode::None) return t;
  const FuncType& after = s.types[s.funcs[func_addr].type_id];
  for (size_t k = 0; k < nr; ++k) io[k] = detail::normalize_bits(after.results[k], io[k]);
  return TrapCode::None;
}

InvokeResult Store::invoke(uint32_t func_addr, const std::vector<Value>& args) {
  InvokeResult r;
  StoreImpl& s = *impl_;
  auto host_error = [&] {
    s.last_trap = TrapInfo{TrapCode::HostError, 0, 0};
    r.trap = TrapCode::HostError;
    return r;
  };
  if (func_addr >= s.funcs.size()) return host_error();
  const FuncType& type = s.types[s.funcs[func_addr].type_id];
  if (args.size() != type.params.size()) return host_error();
  std::vector<uint64_t> in(args.size()), in_hi(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].type != type.params[i]) return host_error();
    in[i] = detail::normalize_bits(args[i].type, args[i].bits);
    in_hi[i] = args[i].type == ValType::V128 ? args[i].hi : 0;
  }
  std::vector<uint64_t> out(type.results.size()), out_hi(type.results.size());
  r.trap = detail::call(s, *this, func_addr, in.data(), out.data(), in_hi.data(), out_hi.data());
  if (r.trap != TrapCode::None) return r;
  // `type` may dangle if the call interned new types (a host function that
  // instantiated a module), so look it up again.
  const FuncType& t = s.types[s.funcs[func_addr].type_id];
  r.results.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i)
    r.results.push_back(Value{t.results[i], detail::normalize_bits(t.results[i], out[i]),
                              t.results[i] == ValType::V128 ? out_hi[i] : 0});
  return r;
}

}  // namespace ww
