// The CPU interpreter of the register bytecode.
#pragma once

#include <cstdint>

#include "store/store.h"

namespace ww {

// Calls store function `func_addr` (a wasm function, through the
// instance's compiled code when it has the function, or a host function).
// Arguments are in slots[0..params) and results come back in
// slots[0..results); `slots` points into store.stack. Returns the trap, if
// any, and records where it happened in store.last_trap. Re-entrant: a call
// into another instance's function recurses through here, with
// store.depth bounding the total depth.
TrapCode cpu_call(StoreImpl& store, Store& api, uint32_t func_addr, uint64_t* slots);

}  // namespace ww
