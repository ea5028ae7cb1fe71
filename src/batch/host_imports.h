// Satisfies a batch module's imports from the host modules wasmwarp offers:
// the `gpu` intrinsics (src/intrinsics), on every backend and tier, WASI,
// and the embedder's host functions. Anything else is reported clearly
// before any instance runs, or, for function imports where the batch asks
// for it (BatchSpec::unknown_imports), stood in for by a function that
// traps or returns zeros (runtime/unknown_imports.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/runtime.h"
#include "runtime/unknown_imports.h"
#include "wasi/wasi.h"

namespace ww::batch {

// A function the module imports (module.field), served by the embedder:
// `fn` gets the calling instance's batch index and io (the arguments in,
// the results out, raw bits) and returns a trap to end the instance, or
// TrapCode::None. Called from many threads at once.
struct HostFunction {
  std::string module, field;
  FuncType type;
  std::function<TrapCode(uint64_t instance, uint64_t* io)> fn;
};
using HostFunctions = std::vector<HostFunction>;

// The host function that satisfies import `imp`, or null.
const HostFunction* host_function_for(const Import& imp, const HostFunctions* host);

// Whether something provides import `imp`: the `gpu` module, WASI when
// the batch has a WASI context (`wasi`: a WASI command, or the directories
// of gpu.read_file), or one of `host`'s functions.
bool import_provided(const Import& imp, bool wasi, const HostFunctions* host);

// Per function import of `m`, in order: whether nothing provides it (as
// import_provided says), so that a stand-in serves it.
std::vector<bool> unknown_function_imports(const Module& m, bool wasi, const HostFunctions* host);

// Fails naming the first import no host module (nor `host`) provides
// ("unsatisfied import env.foo (func)"; with `unknown` other than Error
// only a memory, table or global), a `gpu` import of the wrong name or
// type, or a host function of another type than the import's. `wasi`: a
// WASI command. Cheap; run before any instance is made.
Status check_imports(const Module& m, bool wasi = false, const HostFunctions* host = nullptr,
                     UnknownImports unknown = UnknownImports::Error);

// True when the module imports anything from `gpu`.
bool uses_gpu_module(const Module& m);

// The extern values for instantiations of `m` in `store`, in import order;
// `ctx` is what the intrinsics see (the batch and the current instance);
// function imports nothing provides get `unknown`'s stand-ins.
// Call once per Store: the values serve every instantiation in it.
Result<std::vector<ExternVal>> link_imports(Store& store, const Module& m, intrinsics::GpuContext* ctx,
                                            wasi::Context* wasi = nullptr, const HostFunctions* host = nullptr,
                                            UnknownImports unknown = UnknownImports::Error);

}  // namespace ww::batch
