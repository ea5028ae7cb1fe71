// libFuzzer target over the whole front end: decode -> validate -> translate
// (ww::compile_module). Modules that compile, import nothing and ask for
// little memory are then instantiated and every exported function is run
// with zero arguments under a fuel limit, so the interpreter sees the
// translator's output for hostile input too. Any crash, sanitizer report or
// leak is a bug: bad input must give an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "runtime/runtime.h"

namespace {

// Caps that keep one input fast and small; larger modules are still
// compiled, just not run.
constexpr uint64_t kMaxRunPages = 16;
constexpr uint64_t kMaxRunTableSize = 1u << 16;

bool small_enough_to_run(const ww::Module& m) {
  if (!m.imports.empty()) return false;
  for (const auto& mem : m.memories)
    if (mem.limits.min > kMaxRunPages) return false;
  for (const auto& t : m.tables)
    if (t.limits.min > kMaxRunTableSize) return false;
  return true;
}

void run_exports(const std::shared_ptr<const ww::CompiledModule>& cm) {
  ww::StoreLimits limits;
  limits.max_call_depth = 500;
  limits.stack_slots = 1u << 16;
  limits.max_memory_pages = kMaxRunPages;
  limits.fuel = 100000;
  ww::Store store(limits);
  auto inst = store.instantiate(cm, {});
  if (!std::holds_alternative<uint32_t>(inst)) return;
  const uint32_t id = std::get<uint32_t>(inst);
  for (const auto& e : cm->module.exports) {
    if (e.kind != ww::ExternKind::Func) continue;
    auto ext = store.get_export(id, e.name);
    if (!ext) __builtin_trap();  // an export the module declares must resolve
    const ww::FuncType& ft = store.func_type(ext->addr);
    std::vector<ww::Value> args;
    for (ww::ValType t : ft.params) args.push_back(ww::Value{t, 0});
    auto r = store.invoke(ext->addr, args);
    if (r.ok() && r.results.size() != ft.results.size()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  auto compiled = ww::compile_module(std::move(bytes));
  if (!compiled.ok()) {
    // Every rejection must say why.
    if (compiled.error().message.empty()) __builtin_trap();
    return 0;
  }
  if (small_enough_to_run((*compiled)->module)) run_exports(*compiled);
  return 0;
}
