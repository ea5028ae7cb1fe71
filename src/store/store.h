// The store's internal layout: what an instance, a memory, a table is. The
// executors (exec/cpu, exec/compiled) read these structures directly on
// their hot paths; everything else goes through ww::Store (runtime/).
// Layering: this folder sits below both, so neither includes the other
// to find it.
#pragma once

#include <atomic>
#include <cstddef>

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/host_column.h"
#include "runtime/runtime.h"
#include "semantics/memory_ops.h"

namespace ww {

inline constexpr uint32_t kHostInstance = ~0u;

struct FuncInst {
  uint32_t type_id = 0;               // store-canonical: equal FuncTypes share an id
  uint32_t instance = kHostInstance;  // owning instance, or kHostInstance
  uint32_t defined_index = 0;         // index into the module's defined functions
  HostFunc host;                      // set when instance == kHostInstance
};

struct MemoryInst {
  std::vector<uint8_t, ZeroedAllocator<uint8_t>> data;  // size == pages * kPageSize
  uint32_t pages = 0;
  uint32_t max_pages = kMaxPages;  // min(declared max, store cap)
  // The max the memory was declared with, for import matching (limits
  // subtyping looks at the declared max, not at the store's cap).
  std::optional<uint64_t> declared_max;

  // The written-granule flags (semantics/memory_ops.h, sem::kWrittenShift).
  static constexpr uint32_t kWrittenShift = sem::kWrittenShift;
  std::vector<uint8_t> written;

  // The flags, sized to the memory. Code that replaced `data` wholesale
  // (a test harness restoring a copy) left them short: the new granules
  // count as written, since nothing says what they hold.
  uint8_t* written_flags() {
    const size_t n = data.size() >> kWrittenShift;
    if (written.size() != n) written.resize(n, 1);
    return written.data();
  }
  void mark_written(uint64_t d, uint64_t n) { sem::mark_written_range(written_flags(), d, n); }
  // Grows or shrinks to `p` pages; new bytes are zero, never written.
  void resize_pages(uint32_t p) {
    const size_t n = size_t(p) * kPageSize, old = data.size();
    // A new block is zeros already; bytes past the size within the old one
    // may not be (a memory cut back, or cleared, keeps its block).
    const bool fresh = n > data.capacity();
    data.resize(n);
    if (!fresh && n > old) std::memset(data.data() + old, 0, n - old);
    written.resize(data.size() >> kWrittenShift, 0);
    pages = p;
  }
};

struct TableInst {
  TableType type;               // type.limits.min is the initial size
  std::vector<uint64_t> elems;  // reference values (0 = null)
};

struct GlobalInst {
  GlobalType type;
  uint64_t bits = 0;
  uint64_t hi = 0;  // a v128's high word, right after its low one (the interpreter reads both)
};
static_assert(offsetof(GlobalInst, hi) == offsetof(GlobalInst, bits) + 8);

struct StoreImpl;

// Where the interpreter counts, for tier-up (compiled/tier_up.h), the
// calls and loop back-edges of each defined function: this thread's
// counters, and a report each time a count passes a multiple of `every`
// (a power of two), so that the functions reported most are the hottest.
class TierProfile {
 public:
  virtual ~TierProfile() = default;
  // This thread's counts, by defined function; valid while the profile is.
  virtual uint32_t* counts() = 0;
  // `def`'s count passed another multiple of `every`.
  virtual void hot(uint32_t def) = 0;
  uint32_t every = 1;
};

// One function's compiled code bound to its instance once, for calls from
// the top level again and again (NativeCode::bind).
class NativeEntry {
 public:
  virtual ~NativeEntry() = default;
  // NativeCode::call with the arguments in slots[0..params).
  virtual TrapCode call(uint64_t* slots) = 0;
};

// Compiled code for an instance's functions (the compiled CPU tier). The
// CPU executor's entry point (cpu_call) runs a function through it when it
// has the function, and through the interpreter otherwise; either may call
// the other through the store.
class NativeCode {
 public:
  virtual ~NativeCode() = default;
  // Defined function `def` of `instance` bound for repeated top-level
  // calls; null when has() says no (or the code binds nothing ahead).
  virtual std::unique_ptr<NativeEntry> bind(StoreImpl& store, Store& api, uint32_t instance, uint32_t def) const {
    (void)store, (void)api, (void)instance, (void)def;
    return nullptr;
  }
  // Whether it can run defined function `def` in `store` (compiled code is
  // built for one fuel setting: with or without metering).
  virtual bool has(const StoreImpl& store, uint32_t def) const = 0;
  // has() as flags by defined function, for the interpreter to read at
  // every call: an interpreted function's callee runs compiled when it can
  // (mixed tiers; tier-up sets flags while the program runs). Null: the
  // code runs nothing in `store`.
  virtual const std::atomic<uint8_t>* runnable(const StoreImpl& store) const = 0;
  // Where the interpreter counts for tier-up; null: nothing is counted.
  virtual TierProfile* profile() const { return nullptr; }
  // Runs defined function `def` of `instance` with arguments in
  // slots[0..params) and results back in slots[0..results). Records
  // store.last_trap on a trap, as the interpreter does.
  virtual TrapCode call(StoreImpl& store, Store& api, uint32_t instance, uint32_t def, uint64_t* slots) const = 0;
};

struct InstanceRec {
  std::shared_ptr<const CompiledModule> module;
  std::shared_ptr<const NativeCode> native;                // null: interpreted
  std::vector<uint32_t> funcs, tables, memories, globals;  // store addresses
  std::vector<uint32_t> type_ids;                          // module type index -> store type_id (call_indirect checks)
  // Hot-path caches, filled at instantiation: pointers stay valid because
  // the store keeps globals in a deque and never removes any.
  std::vector<uint64_t*> global_ptrs;
  std::vector<std::vector<uint64_t>> elem_segments;  // emptied by elem.drop
  std::vector<uint8_t> data_dropped;
};

// A number no other Store of the process has had (compiled code keeps what
// it bound to a store's instance under it).
uint64_t new_store_id();

struct StoreImpl {
  StoreLimits limits;
  const uint64_t id = new_store_id();
  std::vector<FuncType> types;  // canonical types, by type_id
  std::deque<FuncInst> funcs;
  std::deque<MemoryInst> memories;
  std::deque<TableInst> tables;
  std::deque<GlobalInst> globals;
  std::deque<InstanceRec> instances;

  // The value stack, limits.stack_slots long once the first call (invoke or
  // a start function) has allocated it: a Store that only instantiates
  // modules without start functions never pays for it. Left uninitialised
  // (frames zero their locals): zero-filling the default 32 MiB would be a
  // noticeable start-up cost in every run, and only the pages that frames
  // touch are ever committed.
  class SlotStack {
   public:
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    uint64_t* data() { return slots_.get(); }
    const uint64_t* data() const { return slots_.get(); }
    void allocate(size_t n) {
      slots_.reset(new uint64_t[n]);
      size_ = n;
    }

   private:
    std::unique_ptr<uint64_t[]> slots_;
    size_t size_ = 0;
  };
  SlotStack stack;
  uint32_t depth = 0;  // current call depth, across re-entries
  // While a host function runs: the first stack slot no live frame uses.
  // cpu_call sets it before calling a host function, so that a host
  // function that calls Store::invoke gets its frames above the caller's.
  uint32_t stack_top = 0;
  // Instructions left in the current top-level invoke when limits.fuel != 0;
  // Store::invoke resets it at each top-level call.
  uint64_t fuel_left = 0;
  TrapInfo last_trap;

  // Chooses compiled code for each new instance, before its start function
  // runs; unset or returning null: the instance is interpreted.
  std::function<std::shared_ptr<const NativeCode>(const std::shared_ptr<const CompiledModule>&)> native_for;

  uint32_t intern_type(const FuncType& t);
};

// Slots per value in the frames of function `func_addr`: its module's
// BytecodeModule::slot_width (2 when it holds v128 values), 1 for a host
// function.
inline uint32_t slot_width_of(const StoreImpl& s, uint32_t func_addr) {
  const FuncInst& f = s.funcs[func_addr];
  return f.instance == kHostInstance ? 1 : s.instances[f.instance].module->code.bytecode.slot_width;
}

// Moves the `n` values at `p` from a frame of `from` slots per value to
// one of `to`, in place (a call between a module with v128 values and one
// without: no v128 crosses it, so a value's second slot is never needed).
inline void relayout_slots(uint64_t* p, size_t n, uint32_t from, uint32_t to) {
  if (from == to) return;
  if (from > to) {
    for (size_t i = 0; i < n; ++i) p[i] = p[i * from];
  } else {
    for (size_t i = n; i-- > 0;) {
      p[i * to] = p[i];
      p[i * to + 1] = 0;
    }
  }
}

}  // namespace ww
