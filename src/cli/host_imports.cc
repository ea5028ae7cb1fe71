#include "cli/host_imports.h"

#include <optional>
#include <string_view>

namespace ww::cli {
namespace {

// One host module: given an import, returns its extern value in `store`, or
// nullopt if the module has no such field of that type. Issue 3 adds `gpu`.
struct HostModule {
  std::string_view name;
  std::optional<ExternVal> (*provide)(Store& store, const Module& m, const Import& imp);
};

constexpr HostModule kHostModules[] = {{"", nullptr}};

const HostModule* find_host(std::string_view name) {
  for (const auto& h : kHostModules)
    if (h.provide && h.name == name) return &h;
  return nullptr;
}

Error unsatisfied(const Import& imp) {
  return make_error(kNoOffset, "unsatisfied import " + imp.module + "." + imp.field + " (" +
                                    extern_kind_name(imp.kind) + ")");
}

}  // namespace

Status check_imports(const Module& m) {
  for (const Import& imp : m.imports)
    if (!find_host(imp.module)) return unsatisfied(imp);
  return Status::Ok();
}

Result<std::vector<ExternVal>> link_imports(Store& store, const Module& m) {
  std::vector<ExternVal> out;
  out.reserve(m.imports.size());
  for (const Import& imp : m.imports) {
    const HostModule* h = find_host(imp.module);
    std::optional<ExternVal> v = h ? h->provide(store, m, imp) : std::nullopt;
    if (!v) return unsatisfied(imp);
    out.push_back(*v);
  }
  return out;
}

}  // namespace ww::cli
