#include "exec/gpu/plan/module_on_device.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>

#include "exec/gpu/device/dev_wasi_ids.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/unknown_imports.h"

namespace ww::gpu {

namespace {

// The device's intrinsic for a function import, or null: the host's.
const intrinsics::IntrinsicInfo* device_intrinsic(const Import& im) {
  const intrinsics::IntrinsicInfo* info =
      im.module == intrinsics::kModuleName ? intrinsics::find_intrinsic(im.field) : nullptr;
  return info && !intrinsic_on_host(info->id) ? info : nullptr;
}

}  // namespace

Result<std::vector<ExternVal>> link_for_batch(Store& store, const Module& m, GpuContext* ctx, bool served,
                                              const std::vector<uint8_t>& unknown) {
  if (!served && unknown.empty()) return link_gpu_imports(store, m, ctx);
  std::vector<std::optional<ExternVal>> resolved;
  WW_TRY(resolve_gpu_imports(store, m, ctx, resolved));
  std::vector<ExternVal> out;
  uint32_t func = 0;  // the import's function index, while it is one
  for (size_t i = 0; i < m.imports.size(); ++i) {
    const Import& im = m.imports[i];
    const uint8_t stand_in = im.kind == ExternKind::Func && func < unknown.size() ? unknown[func] : 0;
    if (!resolved[i] && dev_stand_in(stand_in)) {
      // As on the CPU, should instantiation call it.
      const UnknownImports how = stand_in == kDevTrapImport ? UnknownImports::Trap : UnknownImports::Default;
      resolved[i] =
          ExternVal{ExternKind::Func, store.add_host_func(m.types[im.func_type], unknown_import_func(m, func, how))};
    }
    if (!resolved[i] && served && im.kind == ExternKind::Func)
      resolved[i] =
          ExternVal{ExternKind::Func,
                    store.add_host_func(m.types[im.func_type], [](Store&, uint64_t*) { return TrapCode::HostError; })};
    if (!resolved[i]) return make_error(im.offset, "unknown import " + im.module + "." + im.field);
    out.push_back(*resolved[i]);
    func += im.kind == ExternKind::Func;
  }
  return out;
}

uint32_t host_call_width_of(const GpuImage& img) {
  uint32_t w = 1;
  for (size_t f = 0; f < img.import_nparams.size(); ++f)
    w = std::max({w, img.import_nparams[f], img.import_nresults[f]});
  return w;
}

bool uses_host_calls(const BatchRequest& req, const GpuImage& img) {
  return req.host_calls && std::any_of(img.import_intrinsic.begin(), img.import_intrinsic.end(),
                                       [](uint8_t id) { return id >= kDevWasiFirst && !dev_stand_in(id); });
}

std::vector<uint8_t> import_intrinsics_of(const StoreImpl& s, uint32_t instance, const std::vector<uint8_t>& unknown) {
  const InstanceRec& inst = s.instances[instance];
  const Module& m = inst.module->module;
  std::vector<uint8_t> ids;
  for (const Import& im : m.imports) {
    if (im.kind != ExternKind::Func) continue;
    const intrinsics::IntrinsicInfo* info = device_intrinsic(im);
    const uint8_t stand_in = ids.size() < unknown.size() ? unknown[ids.size()] : 0;
    ids.push_back(info ? uint8_t(info->id) : dev_stand_in(stand_in) ? stand_in : kDevHostImport);
  }
  return ids;
}

Status PackedModule::upload(DeviceArena& arena, PinnedStaging& staging) {
  uint8_t* base = nullptr;
  WW_TRY(arena.alloc(&base, bytes_.size()));
  WW_TRY(staging.send(base, bytes_.data(), bytes_.size()));
  for (const auto& f : fixups_) f(base);
  return Status::Ok();
}

PackedModule pack_module(const GpuImage& img, ModuleOnDevice& out, uint32_t sparse_shift) {
  PackedModule up;
  DevModule& M = out.M;
  up.add(&M.code, img.code);
  up.add(&M.consts, img.consts);
  up.add(&M.br_tables, img.br_tables);
  up.add(&M.funcs, img.funcs);
  M.num_imported_funcs = img.num_imported_funcs;
  M.num_funcs = img.num_funcs;
  up.add(&M.func_canon, img.func_canon);
  up.add(&M.type_canon, img.type_canon);
  up.add(&M.import_intrinsic, img.import_intrinsic);
  up.add(&M.import_nparams, img.import_nparams);
  up.add(&M.import_nresults, img.import_nresults);
  up.add(&M.data_bytes, img.data_bytes);
  up.add(&M.data_offset, img.data_offset);
  up.add(&M.data_size, img.data_size);
  up.add(&M.elem_refs, img.elem_refs);
  up.add(&M.elem_offset, img.elem_offset);
  up.add(&M.elem_size, img.elem_size);
  up.add(&M.table_offset, img.table_offset);
  up.add(&M.table_cap, img.table_cap);
  up.add(&M.shared_tables, img.table_elems);
  up.add(&M.shared_table_size, img.table_init_size);
  M.num_tables = uint32_t(img.table_cap.size());
  M.slot_width = img.slot_width;
  M.global_hi_row = uint32_t(img.global_types.size());

  InitState& S = out.init;
  up.add(&S.globals, img.globals);
  S.nglobals = uint32_t(img.globals.size());
  up.add(&S.data_dropped, img.data_dropped);
  S.ndatas = uint32_t(img.data_size.size());
  up.add(&S.elem_dropped, img.elem_dropped);
  S.nelems = uint32_t(img.elem_size.size());
  S.init_pages = img.init_pages;
  up.add(&S.table_init_size, img.table_init_size);
  S.total_table_cap = img.total_table_cap();

  if (sparse_shift) {
    // The image in whole parts of a chunk, then one part of zeros (what
    // reads past it see); the dense layout's words are not needed.
    const uint64_t part = uint64_t(1) << sparse_shift;
    out.num_image_chunks = uint32_t((img.memory.size() + part - 1) / part);
    std::vector<uint8_t> parts((uint64_t(out.num_image_chunks) + 1) * part, 0);
    if (!img.memory.empty()) std::memcpy(parts.data(), img.memory.data(), img.memory.size());
    up.add(&out.image_chunks, parts);
    return up;
  }
  std::vector<uint32_t> words((img.memory.size() + 3) / 4, 0);
  if (!img.memory.empty()) std::memcpy(words.data(), img.memory.data(), img.memory.size());
  // Past its last non-zero byte (GpuImage::memory) the image is the zeros
  // cudaMemset writes.
  up.add(&out.image_words, words);
  out.num_image_words = words.size();
  return up;
}

Status upload_intrinsics(DeviceArena& arena, GpuBatch* gb, DevIntrinsics& I, unsigned long long* ignored_pixels,
                         std::vector<uint32_t>* canvas_before, bool* canvas_mapped) {
  if (canvas_mapped) *canvas_mapped = false;
  I.filter = gb ? gb->filter : TextureFilter::Nearest;
  I.ignored_pixels = ignored_pixels;
  if (!gb) return Status::Ok();
  if (gb->image) {
    I.image_w = gb->image->width;
    I.image_h = gb->image->height;
    std::lock_guard<std::mutex> g(gb->canvas_mu);
    if (canvas_before) *canvas_before = gb->image->pixels;
    // set_pixel only stores, so pixels drawn into host memory cross while
    // the kernel runs, where a canvas as large as Mandelbrot's 33 MB would
    // come down only after it.
    void* host = canvas_mapped ? pinned_for_kernels(gb->image->pixels.data(), gb->image->pixels.size() * 4) : nullptr;
    if (host) {
      I.image = static_cast<uint32_t*>(host);
      *canvas_mapped = true;
    } else if (gb->image->blank) {
      WW_TRY(arena.alloc(&I.image, gb->image->pixels.size()));
      WW_CUDA(cudaMemsetAsync(I.image, 0, gb->image->pixels.size() * 4));
    } else {
      const uint32_t* p;
      WW_TRY(arena.upload(&p, gb->image->pixels));
      I.image = const_cast<uint32_t*>(p);
    }
  }
  if (!gb->state.empty()) {
    const int32_t* p;
    WW_TRY(arena.upload(&p, gb->state));
    I.state = const_cast<int32_t*>(p);
    I.state_size = uint32_t(gb->state.size());
  }
  for (int u = 0; u < kMaxTextureUnits; ++u) {
    if (!gb->texture_bound(u)) continue;
    const intrinsics::Image& tex = gb->textures[u];
    const uint8_t* p;
    WW_TRY(arena.upload(&p, tex.rgba));
    I.textures[u] = TextureView{p, tex.width, tex.height};
  }
  return Status::Ok();
}

Status download_intrinsics(GpuBatch* gb, const DevIntrinsics& I, PinnedStaging& staging,
                           const std::vector<uint32_t>* canvas_before, bool canvas_down, unsigned long long ignored) {
  if (!gb) return Status::Ok();
  if (gb->image && I.image && canvas_before) {
    std::vector<uint32_t> mine(canvas_before->size());
    WW_TRY(staging.fetch(mine.data(), I.image, mine.size() * 4));
    // Where two GPUs drew one pixel, one of theirs stays, as where two
    // instances of one GPU did.
    std::lock_guard<std::mutex> g(gb->canvas_mu);
    for (size_t p = 0; p < mine.size(); ++p)
      if (mine[p] != (*canvas_before)[p]) gb->image->pixels[p] = mine[p];
    gb->image->blank = false;
  } else if (gb->image && I.image) {
    if (!canvas_down) WW_TRY(staging.fetch(gb->image->pixels.data(), I.image, gb->image->pixels.size() * 4));
    gb->image->blank = false;
  }
  if (I.state) WW_CUDA(cudaMemcpy(gb->state.data(), I.state, gb->state.size() * 4, cudaMemcpyDeviceToHost));
  gb->ignored_pixels += ignored;
  return Status::Ok();
}

}  // namespace ww::gpu
