// The store's internal layout. The CPU interpreter reads these structures
// directly on its hot path; everything else goes through ww::Store.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "wasmwarp/runtime.h"

namespace ww {

inline constexpr uint32_t kHostInstance = ~0u;


struct FuncInst {
  uint32_t type_id = 0;          // store-canonical: equal FuncTypes share an id
  uint32_t instance = kHostInstance;  // owning instance, or kHostInstance
  uint32_t defined_index = 0;    // index into the module's defined functions
  HostFunc host;                 // set when instance == kHostInstance
};

struct MemoryInst {
  std::vector<uint8_t> data;  // size == pages * kPageSize
  uint32_t pages = 0;
  uint32_t max_pages = kMaxPages;  // min(declared max, store cap)
  // The max the memory was declared with, for import matching (limits
  // subtyping looks at the declared max, not at the store's cap).
  std::optional<uint64_t> declared_max;
};

struct TableInst {
  TableType type;               // type.limits.min is the initial size
  std::vector<uint64_t> elems;  // reference values (0 = null)
};

struct GlobalInst {
  GlobalType type;
  uint64_t bits = 0;
};

struct InstanceRec {
  std::shared_ptr<const CompiledModule> module;
  std::vector<uint32_t> funcs, tables, memories, globals;  // store addresses
  std::vector<uint32_t> type_ids;  // module type index -> store type_id (call_indirect checks)
  // Hot-path caches, filled at instantiation: pointers stay valid because
  // the store keeps globals in a deque and never removes any.
  std::vector<uint64_t*> global_ptrs;
  std::vector<std::vector<uint64_t>> elem_segments;  // emptied by elem.drop
  std::vector<uint8_t> data_dropped;
};

struct StoreImpl {
  StoreLimits limits;
  std::vector<FuncType> types;        // canonical types, by type_id
  std::deque<FuncInst> funcs;
  std::deque<MemoryInst> memories;
  std::deque<TableInst> tables;
  std::deque<GlobalInst> globals;
  std::deque<InstanceRec> instances;

  // The value stack, limits.stack_slots long once the first call (invoke or
  // a start function) has allocated it: a Store that only instantiates
  // modules without start functions never pays for it.
  std::vector<uint64_t> stack;
  uint32_t depth = 0;           // current call depth, across re-entries
  // While a host function runs: the first stack slot no live frame uses.
  // cpu_call sets it before calling a host function, so that a host
  // function that calls Store::invoke gets its frames above the caller's.
  uint32_t stack_top = 0;
  // Instructions left in the current top-level invoke when limits.fuel != 0;
  // Store::invoke resets it at each top-level call.
  uint64_t fuel_left = 0;
  TrapInfo last_trap;

  uint32_t intern_type(const FuncType& t);
};

}  // namespace ww
