// Compiled CPU code loaded into the process: the shared object's bytes are
// put in an anonymous file (memfd) and dlopen'ed from there, so nothing is
// loaded from the cache directory itself (which may be read-only or shared)
// and a cache entry is verified before it is loaded. The result is the
// Store's NativeCode: cpu_call runs a compiled function through it, with
// the host side of codegen/rt/cpu_abi.h.
#pragma once

#include <memory>
#include <vector>

#include "codegen/rt/cpu_abi.h"
#include "common/result.h"
#include "store/store.h"

namespace ww::compiled {

// `metered`: the code counts fuel; it then runs only in Stores with a fuel
// limit and unmetered code only in Stores without one (NativeCode::has).
// Tier-up's use of a unit (compiled/tier_up.cc): its entries by defined
// function, and the table of every loaded unit's entries through which its
// calls reach other units (CpuInst::direct); set before the unit runs.
std::vector<std::pair<uint32_t, rt::CpuEntryFn>> cpu_entries(const NativeCode& code);
void set_direct_calls(const NativeCode& code, const rt::CpuEntryFn* table);

// `num_defined`: the module's defined functions.
Result<std::shared_ptr<const NativeCode>> load_cpu_native(const std::vector<uint8_t>& so, bool metered,
                                                          uint32_t num_defined);

}  // namespace ww::compiled
