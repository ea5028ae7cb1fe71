// Function imports nothing provides, stood in for (as wasmtime's
// --unknown-imports-trap and --unknown-imports-default): a module that
// calls such an import only on rare paths (a wasm-bindgen placeholder, an
// emscripten notification hook, an `env` stub) still runs, and only an
// instance that calls one is affected. A memory, table or global nothing
// provides has no stand-in: a function's absence shows only when it is
// called, theirs at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "runtime/runtime.h"

namespace ww {

enum class UnknownImports : uint8_t {
  Error,    // "unsatisfied import env.foo (func)" before anything runs
  Trap,     // a call traps with TrapCode::UnknownImport, naming the import
  Default,  // a call returns zeros of its result types and does nothing else
};

// The stand-in for function `func` of `m` (an import's function index):
// with Trap it records the import itself as the trap's site (func, no
// offset: trap_text names it); with Default it writes zeros (the null
// reference for references; a v128's high word is the caller's relayout's).
HostFunc unknown_import_func(const Module& m, uint32_t func, UnknownImports how);

// Fills the imports `resolved` lacks with stand-ins (`resolved` holds one
// entry per import of `m`). Fails naming the first import left: with
// Error any ("unsatisfied import env.foo (func)"), else a memory, table
// or global, which no stand-in covers.
Status stand_in_unknown_imports(Store& store, const Module& m, UnknownImports how,
                                std::vector<std::optional<ExternVal>>& resolved);

// The error for import `imp` that nothing provides, or none when `how`
// gives it a stand-in: what stand_in_unknown_imports fails with, without
// a store.
std::optional<Error> unknown_import_error(const Import& imp, UnknownImports how);

// The message of a trap whose site is function `func` of `m`:
// trap_message(code), and for TrapCode::UnknownImport with the import it
// names ("unknown import called: env.foo").
std::string trap_text(const Module& m, TrapCode code, uint32_t func);

}  // namespace ww
