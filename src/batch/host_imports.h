// Satisfies a batch module's imports from the host modules wasmwarp offers:
// the `gpu` intrinsics (src/intrinsics), on every backend and tier.
// Anything else is reported clearly before any instance runs.
#pragma once

#include <vector>

#include "common/result.h"
#include "intrinsics/gpu_batch.h"
#include "wasi/wasi.h"
#include "runtime/runtime.h"

namespace ww::batch {

// Fails naming the first import no host module provides ("unsatisfied
// import env.foo (func)") or a `gpu` import of the wrong name or type.
// Cheap; run before any instance is made.
Status check_imports(const Module& m, bool wasi = false);

// True when the module imports anything from `gpu`.
bool uses_gpu_module(const Module& m);

// The extern values for instantiations of `m` in `store`, in import order;
// `ctx` is what the intrinsics see (the batch and the current instance).
// Call once per Store: the values serve every instantiation in it.
Result<std::vector<ExternVal>> link_imports(Store& store, const Module& m, gpu::GpuContext* ctx,
                                            wasi::Context* wasi = nullptr);

}  // namespace ww::batch
