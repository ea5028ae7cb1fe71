// Helpers shared by the runtime's own files (store.cc, instantiate.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace ww::detail {

// Masks i32/f32 values to their low 32 bits.
uint64_t normalize_bits(ValType t, uint64_t bits);

// Sizes a new memory: min pages, max = min(declared max, store cap). False
// when min is above the cap or the host cannot allocate it.
bool init_memory(const StoreLimits& limits, const MemoryType& type, MemoryInst& m);

// Allocates the value stack on first use; false when the host cannot.
bool ensure_stack(StoreImpl& s);

// Runs store function `func_addr` with raw argument slots args[0..params)
// (already checked against its type), on the stack bottom or, when
// re-entered from a host function, above the live frames; its results go
// to results[0..results) unless that is null. Records last_trap.
// One word per argument and result; a v128's high word comes from args_hi[i]
// and goes to results_hi[i] (either may be null: no v128 there).
TrapCode call(StoreImpl& s, Store& api, uint32_t func_addr, const uint64_t* args, uint64_t* results,
              const uint64_t* args_hi = nullptr, uint64_t* results_hi = nullptr);

// Overwrites a new instance's own memories, globals, tables and segments
// with `snap` (Store::instantiate with an image); the reason when it does
// not fit the instance.
std::optional<std::string> apply_snapshot(StoreImpl& s, InstanceRec& inst, const InstanceSnapshot& snap);

}  // namespace ww::detail
