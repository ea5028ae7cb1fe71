#include "decode/module.h"

namespace ww {

const Import& Module::import_of(ExternKind kind, uint32_t index) const {
  // Imports are few in practice; a scan keeps Module a plain aggregate.
  uint32_t seen = 0;
  for (const Import& imp : imports) {
    if (imp.kind != kind) continue;
    if (seen == index) return imp;
    ++seen;
  }
  // Callers guarantee index < num_imported_*; reaching here is a caller bug,
  // but returning a reference to something keeps it free of UB.
  static const Import kNone;
  return kNone;
}

uint32_t Module::func_type_index(uint32_t funcidx) const {
  if (funcidx < num_imported_funcs) return import_of(ExternKind::Func, funcidx).func_type;
  return funcs[funcidx - num_imported_funcs];
}

TableType Module::table_type(uint32_t tableidx) const {
  if (tableidx < num_imported_tables) return import_of(ExternKind::Table, tableidx).table;
  return tables[tableidx - num_imported_tables];
}

MemoryType Module::memory_type(uint32_t memidx) const {
  if (memidx < num_imported_memories) return import_of(ExternKind::Memory, memidx).memory;
  return memories[memidx - num_imported_memories];
}

GlobalType Module::global_type(uint32_t globalidx) const {
  if (globalidx < num_imported_globals) return import_of(ExternKind::Global, globalidx).global;
  return globals[globalidx - num_imported_globals].type;
}

std::string Module::func_display_name(uint32_t funcidx) const {
  auto it = func_names.find(funcidx);
  if (it != func_names.end() && !it->second.empty()) return it->second;
  for (const Export& e : exports) {
    if (e.kind == ExternKind::Func && e.index == funcidx) return e.name;
  }
  return "func[" + std::to_string(funcidx) + "]";
}

}  // namespace ww
