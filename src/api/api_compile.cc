// Engine::compile (the compiled-code cache filled ahead of time) and the
// GPU's start-up in the background (Engine::warm_up).
#include <chrono>

#include "api/internal.h"
#include "compiled/compiled_tier.h"
#include "exec/gpu/gpu_backend.h"

namespace wasmwarp {
namespace {

// "sm_90" -> 90; 0 for anything else.
int parse_gpu_arch(const std::string& s) {
  if (s.rfind("sm_", 0) != 0 || s.size() < 5 || s.find_first_not_of("0123456789", 3) != std::string::npos) return 0;
  const int arch = std::atoi(s.c_str() + 3);
  return arch >= 70 && arch <= 200 ? arch : 0;
}

// What `request` asks the compiler for, checked against the module.
Expected<ww::compiled::Request> compiler_request(const Module& m, const CompileRequest& request, const EngineOptions& e,
                                                 bool& gpu) {
  ww::compiled::Request req;
  req.module = m.impl().cm;
  for (const std::string& name : request.exports) {
    uint32_t index = 0;
    auto t = ww::batch::export_function_type(req.module->module, name, &index);
    if (!t.ok()) return Error{t.error().message};
    req.entries.push_back(index);
  }
  const ww::MemoryLayout layout = api::internal_layout(request.gpu_layout);
  if (layout == ww::MemoryLayout::Auto)
    return Error{"the GPU memory layout to compile for must be interleaved, contiguous or sparse, not auto"};
  gpu = e.backend == Backend::Gpu || !request.gpu_arch.empty();
  if (e.backend == Backend::Auto && request.gpu_arch.empty()) gpu = ww::gpu::probe_device().available;
  if (!request.gpu_arch.empty()) {
    req.gpu_arch = parse_gpu_arch(request.gpu_arch);
    if (!req.gpu_arch)
      return Error{"the GPU architecture must be sm_70 or later, like sm_90, not '" + request.gpu_arch + "'"};
    req.load = ww::gpu::probe_device().available;
  } else if (e.backend == Backend::Gpu) {
    const ww::gpu::DeviceInfo dev = ww::gpu::probe_device();
    if (!dev.available) return Error{"--backend gpu: " + dev.reason};
  }
  req.target = gpu ? ww::compiled::Target::Gpu : ww::compiled::Target::Cpu;
  req.metered = request.metered;
  req.deadline = request.deadline;
  req.layout = layout;
  req.cache.enabled = e.cache;
  req.cache.dir = e.cache_dir;
  return req;
}

}  // namespace

Expected<CompileInfo> Engine::compile(const Module& m, const CompileRequest& request) const {
  bool gpu = false;
  auto req = compiler_request(m, request, options_, gpu);
  if (!req) return req.error();
  CompileInfo info;
  info.target = gpu ? Backend::Gpu : Backend::Cpu;
  if (request.emit_source || request.source_only) {
    auto units = ww::compiled::translation_units(*req);
    if (!units.ok()) return Error{units.error().message};
    info.sources = std::move(*units);
    if (request.source_only) return info;
  }
  ww::compiled::Outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  ww::Status s = ww::Status::Ok();
  if (gpu) {
    if (auto r = ww::compiled::compile_gpu(*req, &out); !r.ok()) s = r.error();
  } else {
    if (auto r = ww::compiled::compile_cpu(*req, &out); !r.ok()) s = r.error();
  }
  if (!s.ok()) return Error{s.error().message};
  info.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  info.cache_hit = out.cache_hit;
  info.generate_ms = out.generate_ms;
  info.compile_ms = out.compile_ms;
  info.load_ms = out.load_ms;
  info.cache_note = out.cache_note;
  if (options_.cache) {
    info.cache_dir = ww::resolve_cache_dir(req->cache);
    info.key = out.key;
  }
  return info;
}

void Engine::warm_up() const {
  if (options_.backend != Backend::Cpu) {
    ww::batch::GpuOptions gpus;
    gpus.devices = options_.gpu.devices;
    gpus.max_devices = options_.gpu.max_devices;
    gpus.tuning = api::internal_tuning(options_.gpu.tuning);
    ww::batch::warm_up_gpu(api::internal_tier(options_.tier), gpus);
  }
}

void wait_for_warm_up() { ww::batch::wait_for_warm_up(); }

void pin_host_memory(const void* p, size_t bytes) { ww::gpu::request_host_pin(p, bytes); }
void unpin_host_memory(const void* p) { ww::gpu::release_host_pin(p); }

int gpu_count() { return ww::gpu::device_count(); }

}  // namespace wasmwarp
