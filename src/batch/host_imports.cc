#include "batch/host_imports.h"

#include <optional>

namespace ww::batch {
namespace {

Error unsatisfied(const Import& imp) {
  return make_error(kNoOffset, "unsatisfied import " + imp.module + "." + imp.field + " (" +
                                    extern_kind_name(imp.kind) + ")");
}

}  // namespace

bool uses_gpu_module(const Module& m) {
  for (const Import& imp : m.imports)
    if (imp.module == gpu::kModuleName) return true;
  return false;
}

Status check_imports(const Module& m, bool wasi) {
  for (const Import& imp : m.imports)
    if (imp.module != gpu::kModuleName && !(wasi && imp.module == wasi::kModuleName)) return unsatisfied(imp);
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
  gpu::GpuBatch batch;
  gpu::GpuContext ctx{&batch, 0};
  std::vector<std::optional<ExternVal>> resolved;
  return gpu::resolve_gpu_imports(scratch, m, &ctx, resolved);
}

Result<std::vector<ExternVal>> link_imports(Store& store, const Module& m, gpu::GpuContext* ctx,
                                            wasi::Context* wasi) {
  std::vector<std::optional<ExternVal>> resolved;
  WW_TRY(gpu::resolve_gpu_imports(store, m, ctx, resolved));
  if (wasi) WW_TRY(wasi->link(store, m, resolved));
  std::vector<ExternVal> out;
  out.reserve(m.imports.size());
  for (size_t i = 0; i < m.imports.size(); ++i) {
    if (!resolved[i]) return unsatisfied(m.imports[i]);
    out.push_back(*resolved[i]);
  }
  return out;
}

}  // namespace ww::batch
