#include "runtime/unknown_imports.h"

#include <algorithm>

#include "store/store.h"

namespace ww {

HostFunc unknown_import_func(const Module& m, uint32_t func, UnknownImports how) {
  if (how == UnknownImports::Trap)
    return [func](Store& s, uint64_t*) {
      // The innermost frame records the site (the interpreter and compiled
      // code keep what they find there): the import, so that the message
      // can name it.
      s.impl().last_trap = TrapInfo{TrapCode::UnknownImport, func, kNoTrapPc};
      return TrapCode::UnknownImport;
    };
  // Host functions take one slot a value: every zero there is its type's
  // zero, +0.0 and null included.
  const size_t results = m.func_type(func).results.size();
  return [results](Store&, uint64_t* slots) {
    std::fill(slots, slots + results, uint64_t{0});
    return TrapCode::None;
  };
}

std::optional<Error> unknown_import_error(const Import& imp, UnknownImports how) {
  const std::string what =
      "unsatisfied import " + imp.module + "." + imp.field + " (" + extern_kind_name(imp.kind) + ")";
  if (how == UnknownImports::Error) return make_error(kNoOffset, what);
  if (imp.kind != ExternKind::Func)
    return make_error(kNoOffset, what + ": only function imports can be left unknown (trap or default)");
  return std::nullopt;
}

Status stand_in_unknown_imports(Store& store, const Module& m, UnknownImports how,
                                std::vector<std::optional<ExternVal>>& resolved) {
  uint32_t func = 0;  // the import's function index, while it is one
  for (size_t i = 0; i < m.imports.size(); ++i) {
    const Import& imp = m.imports[i];
    const bool is_func = imp.kind == ExternKind::Func;
    if (!resolved[i]) {
      if (std::optional<Error> e = unknown_import_error(imp, how)) return *e;
      resolved[i] =
          ExternVal{ExternKind::Func, store.add_host_func(m.types[imp.func_type], unknown_import_func(m, func, how))};
    }
    func += is_func;
  }
  return Status::Ok();
}

std::string trap_text(const Module& m, TrapCode code, uint32_t func) {
  std::string text = trap_message(code);
  if (code != TrapCode::UnknownImport || func >= m.num_imported_funcs) return text;
  uint32_t k = 0;
  for (const Import& imp : m.imports) {
    if (imp.kind != ExternKind::Func) continue;
    if (k++ == func) return text + ": " + imp.module + "." + imp.field;
  }
  return text;
}

}  // namespace ww
