// Registers the `gpu` intrinsics as host functions of a Store. Kept apart
// from gpu_batch.cc so that code using only the batch (tests, the GPU
// backend's host side) does not pull in the runtime.
#include <cstring>

#include "intrinsics/gpu_batch.h"
#include "wasi/wasi_numbers.h"

namespace ww::intrinsics {

// The arithmetic the GPU's kernels share (semantics/intrinsics.h).
using namespace ::ww::gpu;
namespace {

int32_t slot_i32(const uint64_t* slots, int i) { return int32_t(uint32_t(slots[i])); }
float slot_f32(const uint64_t* slots, int i) {
  uint32_t b = uint32_t(slots[i]);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
// i32/f32 results occupy the low 32 bits with the upper bits zero.
void put_i32(uint64_t* slots, int i, int32_t v) { slots[i] = uint32_t(v); }
void put_f32(uint64_t* slots, int i, float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  slots[i] = b;
}

HostFunc make_host_func(Intrinsic id, GpuContext* ctx) {
  switch (id) {
    case Intrinsic::GetThreadId:
      return [ctx](Store&, uint64_t* s) {
        put_i32(s, 0, int32_t(ctx->instance_index));
        return TrapCode::None;
      };
    case Intrinsic::InstanceCount:
      return [ctx](Store&, uint64_t* s) {
        put_i32(s, 0, int32_t(ctx->batch->instance_count));
        return TrapCode::None;
      };
    case Intrinsic::GetTime:
      return [ctx](Store&, uint64_t* s) {
        put_f32(s, 0, ctx->batch->seconds_since_start());
        return TrapCode::None;
      };
    case Intrinsic::SetPixel:
      return [ctx](Store&, uint64_t* s) {
        return gpu_set_pixel(*ctx->batch, slot_i32(s, 0), slot_i32(s, 1), slot_f32(s, 2), slot_f32(s, 3),
                             slot_f32(s, 4), slot_f32(s, 5));
      };
    case Intrinsic::ReadState:
      return [ctx](Store&, uint64_t* s) {
        int32_t v = 0;
        TrapCode t = gpu_read_state(*ctx->batch, slot_i32(s, 0), &v);
        if (t == TrapCode::None) put_i32(s, 0, v);
        return t;
      };
    case Intrinsic::WriteState:
      return [ctx](Store&, uint64_t* s) { return gpu_write_state(*ctx->batch, slot_i32(s, 0), slot_i32(s, 1)); };
    case Intrinsic::AtomicAdd:
      return [ctx](Store&, uint64_t* s) {
        int32_t old = 0;
        TrapCode t = gpu_atomic_add(*ctx->batch, slot_i32(s, 0), slot_i32(s, 1), &old);
        if (t == TrapCode::None) put_i32(s, 0, old);
        return t;
      };
    case Intrinsic::TextureSample:
      return [ctx](Store&, uint64_t* s) {
        float c[4];
        TrapCode t = gpu_texture_sample(*ctx->batch, slot_i32(s, 0), slot_f32(s, 1), slot_f32(s, 2), c);
        if (t == TrapCode::None)
          for (int i = 0; i < 4; ++i) put_f32(s, i, c[i]);
        return t;
      };
    case Intrinsic::ReadFile:
    case Intrinsic::WriteFile:
      // Without directories (--dir, --dir-rw) no path is reachable; the
      // WASI layer links these over its preopens (wasi::Context::link).
      return [](Store&, uint64_t* s) {
        put_i32(s, 0, -int32_t(wasi::kNotcapable));
        return TrapCode::None;
      };
    case Intrinsic::Count_: break;
  }
  return nullptr;
}

}  // namespace

Status resolve_gpu_imports(Store& store, const Module& m, GpuContext* ctx,
                           std::vector<std::optional<ExternVal>>& resolved) {
  resolved.assign(m.imports.size(), std::nullopt);
  for (size_t i = 0; i < m.imports.size(); ++i) {
    const Import& imp = m.imports[i];
    if (imp.module != kModuleName) continue;
    std::string qualified = std::string(kModuleName) + "." + imp.field;
    const IntrinsicInfo* info = find_intrinsic(imp.field);
    if (!info) return make_error(imp.offset, "unknown import " + qualified);
    if (imp.kind != ExternKind::Func)
      return make_error(imp.offset,
                        "import " + qualified + " is a " + extern_kind_name(imp.kind) + ", expected a function");
    if (imp.func_type >= m.types.size())
      return make_error(imp.offset, "import " + qualified + " has an invalid type index");
    const FuncType& got = m.types[imp.func_type];
    if (!(got == info->type))
      return make_error(imp.offset, "import " + qualified + " has type " + functype_to_string(got) + ", expected " +
                                        functype_to_string(info->type));
    uint32_t addr = store.add_host_func(info->type, make_host_func(info->id, ctx));
    resolved[i] = ExternVal{ExternKind::Func, addr};
  }
  return Status::Ok();
}

Result<std::vector<ExternVal>> link_gpu_imports(Store& store, const Module& m, GpuContext* ctx) {
  std::vector<std::optional<ExternVal>> resolved;
  WW_TRY(resolve_gpu_imports(store, m, ctx, resolved));
  std::vector<ExternVal> out;
  out.reserve(resolved.size());
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (!resolved[i])
      return make_error(m.imports[i].offset, "unknown import " + m.imports[i].module + "." + m.imports[i].field);
    out.push_back(*resolved[i]);
  }
  return out;
}

}  // namespace ww::intrinsics
