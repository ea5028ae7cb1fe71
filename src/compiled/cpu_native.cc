#include "compiled/cpu_native.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <type_traits>

#include "codegen/generator.h"
#include "codegen/rt/cpu_abi.h"
#include "exec/cpu/interpreter.h"
#include "store/store_views.h"

namespace ww::compiled {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

// Recursion in compiled code stops with "call stack exhausted" this far
// above the end of the thread's stack: room for a host function or the
// interpreter to finish what it was doing.
constexpr size_t kStackReserve = 256 * 1024;

const char* thread_stack_limit() {
  thread_local const char* limit = [] {
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return static_cast<const char*>(nullptr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    if (size <= kStackReserve) return static_cast<const char*>(addr);
    return static_cast<const char*>(addr) + kStackReserve;
  }();
  return limit;
}

// Whether this thread's native stack is within kStackReserve of its end.
bool native_stack_low() {
  const char* limit = thread_stack_limit();
  return limit && static_cast<const char*>(__builtin_frame_address(0)) < limit;
}

// An array that lives in its owner up to N elements: a batch enters
// compiled code several times per input, and three heap allocations per
// entry would be a large share of a small module's batch (such as
// bench/hashwasm/run-cpu.sh's).
template <class T, size_t N>
class InlineArray {
 public:
  static_assert(std::is_trivially_copyable_v<T>);
  // Elements are written before they are read (refresh_*); the inline
  // space is left uninitialised, since zeroing it costs more than the call.
  void resize(size_t n) {
    size_ = n;
    if (n <= N) {
      data_ = reinterpret_cast<T*>(inline_);
    } else {
      heap_.resize(n);
      data_ = heap_.data();
    }
  }
  size_t size() const { return size_; }
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  alignas(T) unsigned char inline_[N * sizeof(T)];
  std::vector<T> heap_;
  T* data_ = nullptr;
  size_t size_ = 0;
};

// The host's side of one call into compiled code: what the callbacks need
// and the arrays CpuInst points into.
struct HostCall {
  StoreImpl* S;
  Store* api;
  uint32_t instance;
  bool metered;
  uint32_t free_slot;  // first stack slot no live frame uses (for call-outs)
  InlineArray<rt::CpuTable, 4> tables;
  InlineArray<rt::CpuElem, 8> elems;
  InlineArray<rt::CpuData, 8> datas;
  // Every field is set by call() (zeroing the struct, a `rep stos`, would
  // be a large share of call()'s time in hash-wasm's crc32 batch,
  // bench/hashwasm/run-cpu.sh).
  rt::CpuInst I;

  InstanceRec& inst() const { return S->instances[instance]; }

  void refresh_memory() {
    const InstanceRec& in = inst();
    if (in.memories.empty()) return;
    MemoryInst& m = S->memories[in.memories[0]];
    I.mem = m.data.data();
    I.written = m.written_flags();
    I.mem_size = m.data.size();
    I.mem_max_pages = m.max_pages;
  }
  void refresh_table(uint32_t t) {
    StoreTableView v = table_view(*S, inst(), t);
    tables[t] = rt::CpuTable{v.t->elems.data(), v.size(), v.max_size()};
  }
  void refresh_elem(uint32_t seg) {
    auto& refs = inst().elem_segments[seg];
    elems[seg] = rt::CpuElem{refs.data(), uint32_t(refs.size())};
  }
  // After control came back from code that may have grown a shared memory
  // or table.
  void refresh_all() {
    refresh_memory();
    for (uint32_t t = 0; t < tables.size(); ++t) refresh_table(t);
  }
};

HostCall& host_of(rt::CpuInst* I) { return *static_cast<HostCall*>(I->host); }

uint32_t cb_memory_grow(rt::CpuInst* I, uint32_t pages) {
  HostCall& h = host_of(I);
  StoreMemView v{&h.S->memories[h.inst().memories[0]]};
  bool ok = v.grow_to(pages);
  h.refresh_memory();
  return ok ? 1 : 0;
}

uint32_t cb_table_grow(rt::CpuInst* I, uint32_t t, uint32_t n, uint64_t init) {
  HostCall& h = host_of(I);
  bool ok = table_view(*h.S, h.inst(), t).grow_to(n, init);
  h.refresh_table(t);
  return ok ? 1 : 0;
}

void cb_elem_drop(rt::CpuInst* I, uint32_t seg) {
  HostCall& h = host_of(I);
  elem_view(h.inst(), seg).drop();
  h.refresh_elem(seg);
}

// A call that leaves compiled code, as the interpreter makes it: fuel,
// then the callee through cpu_call with its frame above every live one.
uint32_t call_out(HostCall& h, uint32_t func_addr, uint64_t* io, uint32_t depth) {
  StoreImpl& S = *h.S;
  if (native_stack_low()) return uint32_t(TrapCode::CallStackExhausted);
  const FuncType& ft = S.types[S.funcs[func_addr].type_id];
  const size_t np = ft.params.size(), nr = ft.results.size();
  // `io` is in the caller's layout; the callee's module may use the other
  // (BytecodeModule::slot_width: two slots per value with v128).
  const uint32_t caller_w = h.inst().module->code.bytecode.slot_width, callee_w = slot_width_of(S, func_addr);
  const size_t need = std::max(np, nr) * std::max(caller_w, callee_w);
  if (S.stack.size() < size_t(h.free_slot) + need) return uint32_t(TrapCode::CallStackExhausted);
  if (h.metered && --h.I.fuel == 0) return uint32_t(TrapCode::FuelExhausted);
  uint64_t* slots = S.stack.data() + h.free_slot;
  std::copy(io, io + np * caller_w, slots);
  relayout_slots(slots, np, caller_w, callee_w);
  const uint32_t saved_depth = S.depth, saved_top = S.stack_top;
  S.depth = depth;
  S.stack_top = uint32_t(h.free_slot + need);
  if (h.metered) S.fuel_left = h.I.fuel;
  TrapCode t = cpu_call(S, *h.api, func_addr, slots);
  if (h.metered) h.I.fuel = S.fuel_left;
  S.depth = saved_depth;
  S.stack_top = saved_top;
  h.refresh_all();
  if (t == TrapCode::None) {
    relayout_slots(slots, nr, callee_w, caller_w);
    std::copy(slots, slots + nr * caller_w, io);
  }
  return uint32_t(t);
}

uint32_t cb_call_import(rt::CpuInst* I, uint32_t func, uint64_t* io, uint32_t depth) {
  HostCall& h = host_of(I);
  return call_out(h, h.inst().funcs[func], io, depth);
}

uint32_t cb_call_ref(rt::CpuInst* I, uint64_t ref, uint32_t type_index, uint64_t* io, uint32_t depth) {
  HostCall& h = host_of(I);
  TrapCode c = StoreSigCheck{h.S, h.inst().type_ids[type_index]}(ref);
  if (c != TrapCode::None) return uint32_t(c);
  return call_out(h, uint32_t(ref - 1), io, depth);
}

constexpr rt::CpuHostApi kHostApi = {cb_memory_grow, cb_table_grow, cb_elem_drop, cb_call_import, cb_call_ref};

class CpuNative final : public NativeCode, public std::enable_shared_from_this<CpuNative> {
 public:
  CpuNative(void* handle, int fd, bool metered, uint32_t num_defined)
      : handle_(handle), fd_(fd), metered_(metered), by_def_(num_defined, nullptr), runnable_(num_defined) {
    for (uint32_t d = 0; d < num_defined; ++d) runnable_[d].store(0, std::memory_order_relaxed);
  }
  ~CpuNative() override {
    dlclose(handle_);
    ::close(fd_);
  }

  // False: the code names a function the module does not define.
  bool add(uint32_t def, rt::CpuEntryFn fn) {
    if (def >= by_def_.size()) return false;
    by_def_[def] = fn;
    runnable_[def].store(fn ? 1 : 0, std::memory_order_relaxed);
    return true;
  }

  bool has(const StoreImpl& s, uint32_t def) const override {
    return def < by_def_.size() && by_def_[def] && metered_ == (s.limits.fuel != 0);
  }

  const std::atomic<uint8_t>* runnable(const StoreImpl& s) const override {
    return metered_ == (s.limits.fuel != 0) ? runnable_.data() : nullptr;
  }

  // Interpreted code that calls compiled functions (mixed tiers, tier-up)
  // enters them at every call: the host side, which depends on the
  // instance and not on the code (any unit of a module's code uses it), is
  // bound once per thread, store and instance, one per level of nesting,
  // since binding it anew would cost more than many a callee (CPython's
  // data segments).
  TrapCode call(StoreImpl& S, Store& api, uint32_t instance, uint32_t def, uint64_t* slots) const override {
    struct Bound {
      uint64_t store = 0;
      uint32_t instance = 0;
      bool metered = false;
      std::vector<std::unique_ptr<HostCall>> hosts;
      size_t used = 0;
    };
    thread_local Bound b;
    const bool mine = b.store == S.id && b.instance == instance && b.metered == metered_;
    if (!mine && b.used == 0) {
      b.hosts.clear();
      b.store = S.id;
      b.instance = instance;
      b.metered = metered_;
    } else if (!mine) {  // nested in another instance's call: bound for this one only
      HostCall h;
      bind_host(h, S, api, instance);
      return enter(h, def, slots);
    }
    if (b.used == b.hosts.size()) {
      b.hosts.push_back(std::make_unique<HostCall>());
      bind_host(*b.hosts.back(), S, api, instance);
    }
    HostCall& h = *b.hosts[b.used++];
    const TrapCode t = enter(h, def, slots);
    --b.used;
    return t;
  }

  std::unique_ptr<NativeEntry> bind(StoreImpl& S, Store& api, uint32_t instance, uint32_t def) const override;

  // What a call needs of the instance that no call changes (the arrays'
  // places may: enter() refreshes those).
  void bind_host(HostCall& h, StoreImpl& S, Store& api, uint32_t instance) const {
    InstanceRec& inst = S.instances[instance];
    h.S = &S;
    h.api = &api;
    h.instance = instance;
    h.metered = metered_;
    h.tables.resize(inst.tables.size());
    h.elems.resize(inst.elem_segments.size());
    const Module& m = inst.module->module;
    h.datas.resize(m.datas.size());
    for (size_t k = 0; k < m.datas.size(); ++k)
      h.datas[k] = rt::CpuData{m.bytes.data() + m.datas[k].bytes_offset, m.datas[k].size, &inst.data_dropped[k]};
    rt::CpuInst& I = h.I;
    I.globals = inst.global_ptrs.data();
    I.tables = h.tables.data();
    I.elems = h.elems.data();
    I.datas = h.datas.data();
    I.funcs = inst.funcs.data();
    I.func_base = m.funcs.empty() ? 0 : inst.funcs[m.num_imported_funcs];
    I.max_depth = S.limits.max_call_depth;
    static const uint8_t kNoInterrupt = 0;
    // std::atomic<uint8_t> holds just the byte, which the code reads atomically.
    I.interrupt = S.limits.interrupt ? reinterpret_cast<const uint8_t*>(S.limits.interrupt) : &kNoInterrupt;
    I.api = &kHostApi;
    I.host = &h;
  }

  TrapCode enter(HostCall& h, uint32_t def, uint64_t* slots) const {
    StoreImpl& S = *h.S;
    const InstanceRec& inst = h.inst();
    // The interpreter's entry check: a frame more would pass the limit.
    // Calls that go back and forth between the tiers (mixed tiers) nest
    // host frames too: the native stack may end first.
    if (S.depth >= S.limits.max_call_depth || native_stack_low()) {
      S.last_trap = TrapInfo{TrapCode::CallStackExhausted, inst.module->module.num_imported_funcs + def, 0};
      return TrapCode::CallStackExhausted;
    }
    const FunctionCode& fc = inst.module->code.bytecode.funcs[def];
    const uint64_t* stack = S.stack.data();
    const bool on_stack = slots >= stack && slots < stack + S.stack.size();
    h.free_slot = on_stack ? uint32_t(slots - stack) + std::max(fc.num_params, fc.num_results) : S.stack_top;
    for (uint32_t seg = 0; seg < h.elems.size(); ++seg) h.refresh_elem(seg);
    rt::CpuInst& I = h.I;
    I.mem = nullptr;
    I.written = nullptr;
    I.mem_size = 0;
    I.mem_max_pages = 0;
    I.trap = I.trap_func = I.trap_pc = 0;
    I.direct = direct_;
    I.depth = S.depth + 1;
    I.fuel = metered_ ? S.fuel_left : 0;
    I.ticks = 0;
    I.stack_limit = thread_stack_limit();
    h.refresh_all();
    uint32_t trap = by_def_[def](&I, slots);
    if (metered_) S.fuel_left = I.fuel;
    if (trap != 0) {
      // The innermost frame that saw the trap has recorded it already when
      // it came from a call-out.
      if (S.last_trap.code == TrapCode::None) S.last_trap = TrapInfo{TrapCode(trap), I.trap_func, I.trap_pc};
      return TrapCode(trap);
    }
    return TrapCode::None;
  }

 private:
  void* handle_;
  // The memfd the code was loaded from stays open while it is loaded: the
  // dynamic loader knows a library by its path, and a closed fd's number
  // (so its /proc/self/fd path) would be reused by the next module.
  int fd_;
  bool metered_;
  std::vector<rt::CpuEntryFn> by_def_;
  std::vector<std::atomic<uint8_t>> runnable_;

 public:
  // Tier-up's table of every unit's entries (set_direct_calls), set before
  // the code runs.
  const rt::CpuEntryFn* direct_ = nullptr;
  const std::vector<rt::CpuEntryFn>& entries() const { return by_def_; }
};

// The binding of CpuNative::bind: the host's side of the calls, set up
// once where the code's entry finds it.
class CpuEntry final : public NativeEntry {
 public:
  CpuEntry(std::shared_ptr<const CpuNative> code, StoreImpl& S, Store& api, uint32_t instance, uint32_t def)
      : code_(std::move(code)), def_(def) {
    code_->bind_host(h_, S, api, instance);
  }
  TrapCode call(uint64_t* slots) override { return code_->enter(h_, def_, slots); }

 private:
  std::shared_ptr<const CpuNative> code_;
  uint32_t def_;
  HostCall h_;  // CpuInst points into it: never moved
};

std::unique_ptr<NativeEntry> CpuNative::bind(StoreImpl& S, Store& api, uint32_t instance, uint32_t def) const {
  if (!has(S, def)) return nullptr;
  return std::make_unique<CpuEntry>(shared_from_this(), S, api, instance, def);
}

}  // namespace

std::vector<std::pair<uint32_t, rt::CpuEntryFn>> cpu_entries(const NativeCode& code) {
  std::vector<std::pair<uint32_t, rt::CpuEntryFn>> out;
  const auto* c = dynamic_cast<const CpuNative*>(&code);
  if (!c) return out;
  for (uint32_t d = 0; d < c->entries().size(); ++d)
    if (c->entries()[d]) out.push_back({d, c->entries()[d]});
  return out;
}

void set_direct_calls(const NativeCode& code, const rt::CpuEntryFn* table) {
  if (auto* c = dynamic_cast<const CpuNative*>(&code)) const_cast<CpuNative*>(c)->direct_ = table;
}

Result<std::shared_ptr<const NativeCode>> load_cpu_native(const std::vector<uint8_t>& so, bool metered,
                                                          uint32_t num_defined) {
  int fd = ::memfd_create("wasmwarp-module", MFD_CLOEXEC);
  if (fd < 0) return err(std::string("cannot load compiled code: memfd_create: ") + std::strerror(errno));
  size_t off = 0;
  while (off < so.size()) {
    ssize_t w = ::write(fd, so.data() + off, so.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ::close(fd);
      return err(std::string("cannot load compiled code: ") + std::strerror(errno));
    }
    off += size_t(w);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ::close(fd);
    const char* e = dlerror();
    return err(std::string("cannot load compiled code: ") + (e ? e : "dlopen failed"));
  }
  auto native = std::make_shared<CpuNative>(handle, fd, metered, num_defined);
  auto* abi = static_cast<const uint32_t*>(dlsym(handle, codegen::kCpuAbiSymbol));
  auto* count = static_cast<const uint32_t*>(dlsym(handle, codegen::kCpuEntryCountSymbol));
  auto* entries = static_cast<const rt::CpuEntry*>(dlsym(handle, codegen::kCpuEntriesSymbol));
  if (!abi || !count || !entries) return err("compiled code lacks its entry table");
  if (*abi != rt::kCpuAbiVersion)
    return err("compiled code has ABI version " + std::to_string(*abi) + ", this wasmwarp " +
               std::to_string(rt::kCpuAbiVersion));
  for (uint32_t k = 0; k < *count; ++k)
    if (!native->add(entries[k].def, entries[k].fn)) return err("compiled code is not the module's");
  return std::shared_ptr<const NativeCode>(std::move(native));
}

}  // namespace ww::compiled
