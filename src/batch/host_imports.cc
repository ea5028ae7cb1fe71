#include "batch/host_imports.h"

#include <optional>

namespace ww::batch {

const HostFunction* host_function_for(const Import& imp, const HostFunctions* host) {
  if (!host || imp.kind != ExternKind::Func) return nullptr;
  for (const HostFunction& h : *host)
    if (h.module == imp.module && h.field == imp.field) return &h;
  return nullptr;
}

bool uses_gpu_module(const Module& m) {
  for (const Import& imp : m.imports)
    if (imp.module == intrinsics::kModuleName) return true;
  return false;
}

bool import_provided(const Import& imp, bool wasi, const HostFunctions* host) {
  return imp.module == intrinsics::kModuleName || (wasi && imp.module == wasi::kModuleName) ||
         host_function_for(imp, host) != nullptr;
}

std::vector<bool> unknown_function_imports(const Module& m, bool wasi, const HostFunctions* host) {
  std::vector<bool> unknown;
  for (const Import& imp : m.imports)
    if (imp.kind == ExternKind::Func) unknown.push_back(!import_provided(imp, wasi, host));
  return unknown;
}

Status check_imports(const Module& m, bool wasi, const HostFunctions* host, UnknownImports unknown) {
  for (const Import& imp : m.imports) {
    if (const HostFunction* h = host_function_for(imp, host)) {
      const FuncType& want = m.types[imp.func_type];
      // Host functions see one 64-bit word per value.
      if (has_v128(h->type))
        return make_error(kNoOffset, "host function " + imp.module + "." + imp.field +
                                         " takes or returns v128, which host functions cannot carry yet");
      if (h->type.params != want.params || h->type.results != want.results)
        return make_error(kNoOffset, "host function " + imp.module + "." + imp.field + " is " +
                                         functype_to_string(h->type) + "; the module imports it as " +
                                         functype_to_string(want));
      continue;
    }
    if (!import_provided(imp, wasi, host))
      if (std::optional<Error> e = unknown_import_error(imp, unknown)) return *e;
  }
  if (wasi) {
    // Names and types of the WASI imports, likewise.
    Store scratch;
    wasi::Context cx(wasi::Config{});
    std::vector<std::optional<ExternVal>> resolved;
    WW_TRY(cx.link(scratch, m, resolved));
  }
  // Names and types of the gpu imports: linking into a scratch store says
  // exactly what is wrong.
  Store scratch;
  intrinsics::GpuBatch batch;
  intrinsics::GpuContext ctx{&batch, 0};
  std::vector<std::optional<ExternVal>> resolved;
  return intrinsics::resolve_gpu_imports(scratch, m, &ctx, resolved);
}

Result<std::vector<ExternVal>> link_imports(Store& store, const Module& m, intrinsics::GpuContext* ctx,
                                            wasi::Context* wasi, const HostFunctions* host, UnknownImports unknown) {
  std::vector<std::optional<ExternVal>> resolved;
  WW_TRY(intrinsics::resolve_gpu_imports(store, m, ctx, resolved));
  if (wasi) WW_TRY(wasi->link(store, m, resolved));
  for (size_t i = 0; i < m.imports.size(); ++i)
    if (const HostFunction* h = resolved[i] ? nullptr : host_function_for(m.imports[i], host))
      resolved[i] = ExternVal{ExternKind::Func, store.add_host_func(h->type, [h, ctx](Store&, uint64_t* io) {
                                return h->fn(ctx->instance_index, io);
                              })};
  WW_TRY(stand_in_unknown_imports(store, m, unknown, resolved));
  std::vector<ExternVal> out;
  out.reserve(m.imports.size());
  for (const std::optional<ExternVal>& v : resolved) out.push_back(*v);
  return out;
}

}  // namespace ww::batch
