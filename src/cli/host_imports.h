// Satisfies a module's imports from the host modules the CLI offers. There
// are none yet (issue 3 adds `gpu`), so any import is reported clearly.
#pragma once

#include <vector>

#include "common/result.h"
#include "wasmwarp/runtime.h"

namespace ww::cli {

// Fails with "unsatisfied import env.foo (func)" naming the first import no
// host module provides. Cheap; run before any instance is made.
Status check_imports(const Module& m);

// The extern values for one instantiation in `store`, in import order.
Result<std::vector<ExternVal>> link_imports(Store& store, const Module& m);

}  // namespace ww::cli
