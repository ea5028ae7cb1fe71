// The GPU path of `wasmwarp run`, the progress line, and the intrinsics'
// inputs and outputs (--image, --state, --texture).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "cli/batch_job.h"
#include "cli/host_imports.h"
#include "cli/value_format.h"
#include "intrinsics/image_io.h"

namespace ww::cli {

namespace {
Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

std::string human_rate(double per_s) {
  char buf[32];
  if (per_s >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM/s", per_s / 1e6);
  else if (per_s >= 1e3) std::snprintf(buf, sizeof buf, "%.1fk/s", per_s / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f/s", per_s);
  return buf;
}
}  // namespace

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), tty_(isatty(2) == 1) {}

void ProgressLine::update(uint64_t done, uint64_t total, double seconds) {
  if (!enabled_ || seconds < 1.0) return;
  if (seconds - last_ < (tty_ ? 0.5 : 10.0)) return;
  last_ = seconds;
  double rate = seconds > 0 ? double(done) / seconds : 0;
  std::string left = rate > 0 && done < total
                         ? std::to_string(uint64_t(std::ceil(double(total - done) / rate))) + " s left"
                         : "";
  std::fprintf(stderr, "%sprogress: %llu/%llu instances, %s, %.1f s%s%s%s", tty_ ? "\r" : "",
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
               human_rate(rate).c_str(), seconds, left.empty() ? "" : ", ", left.c_str(),
               tty_ ? "   " : "\n");
  shown_ = true;
}

void ProgressLine::finish() {
  if (shown_ && tty_) std::fputs("\n", stderr);
  shown_ = false;
}

Status setup_intrinsics(const RunSpec& spec, uint64_t instances, gpu::GpuBatch& b) {
  b.instance_count = uint32_t(std::min<uint64_t>(instances, 0xffffffffu));
  if (!spec.image.empty()) {
    size_t eq = spec.image.find('=');
    if (eq == std::string::npos || eq + 1 == spec.image.size())
      return err("--image '" + spec.image + "': expected WIDTHxHEIGHT=out.png");
    auto size = gpu::parse_image_size(spec.image.substr(0, eq));
    if (!size.ok()) return err("--image: " + size.error().message);
    b.set_image_size(size->first, size->second);
    // Fail on an unwritable path before running, like --output.
    std::string path = spec.image.substr(eq + 1);
    FILE* f = std::fopen(path.c_str(), "ab");
    if (!f) return err("cannot write " + path);
    std::fclose(f);
  }
  if (!spec.state_in.empty()) {
    WW_ASSIGN_OR_RETURN(b.state, gpu::read_state_file(spec.state_in));
    if (spec.state_size && spec.state_size != b.state.size())
      return err("--state " + std::to_string(spec.state_size) + " but " + spec.state_in + " holds " +
                 std::to_string(b.state.size()) + " values");
  } else if (spec.state_size) {
    if (spec.state_size > (uint64_t(1) << 31)) return err("--state must be below 2^31 entries");
    b.state.assign(spec.state_size, 0);
  }
  if (!spec.state_out.empty() && b.state.empty())
    return err("--state-out needs a state buffer (--state N or --state-in FILE)");
  for (const std::string& t : spec.textures) {
    size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == t.size())
      return err("--texture '" + t + "': expected UNIT=image.png");
    auto unit = parse_u64(t.substr(0, eq));
    if (!unit.ok()) return err("--texture '" + t + "': bad unit");
    WW_ASSIGN_OR_RETURN(gpu::Image img, gpu::read_png(t.substr(eq + 1)));
    WW_TRY(b.bind_texture(int32_t(std::min<uint64_t>(*unit, 1u << 30)), std::move(img)));
  }
  if (spec.texture_filter == "bilinear") b.filter = gpu::TextureFilter::Bilinear;
  else if (spec.texture_filter != "nearest")
    return err("--texture-filter must be nearest or bilinear, not '" + spec.texture_filter + "'");
  return Status::Ok();
}

Status write_intrinsics_outputs(const RunSpec& spec, const gpu::GpuBatch& b) {
  if (!spec.image.empty() && b.image)
    WW_TRY(gpu::write_png(spec.image.substr(spec.image.find('=') + 1), b.image->to_image()));
  if (!spec.state_out.empty()) WW_TRY(gpu::write_state_file(spec.state_out, b.state));
  return Status::Ok();
}

Result<uint64_t> resolve_addr_fresh(const Job& job, const AddrSpec& a, gpu::GpuBatch& gbatch) {
  if (a.export_name.empty()) return a.addr;
  Store store;
  gpu::GpuContext ctx{&gbatch, 0};
  WW_ASSIGN_OR_RETURN(std::vector<ExternVal> imports, link_imports(store, job.mod->module, &ctx));
  auto r = store.instantiate(job.mod, imports);
  if (auto* e = std::get_if<InstantiateError>(&r)) return err("instantiation failed: " + e->message);
  auto ev = store.get_export(std::get<uint32_t>(r), a.export_name);
  if (!ev) return err("no export " + a.export_name);
  if (a.is_global) return uint64_t(uint32_t(store.global_get(ev->addr).bits));
  InvokeResult res = store.invoke(ev->addr, {});
  if (!res.ok()) return err("address export " + a.export_name + " trapped: " + trap_message(res.trap));
  return uint64_t(uint32_t(res.results[0].bits));
}

Result<GpuRunInfo> run_job_on_gpu(Job& job, const RunSpec& spec, gpu::GpuBatch& gbatch,
                                  ProgressLine& progress) {
  const Module& m = job.mod->module;
  gpu::BatchRequest req;
  req.module = job.mod;
  for (const Export& e : m.exports)
    if (e.name == job.export_name && e.kind == ExternKind::Func) req.func_index = e.index;
  if (req.func_index < m.num_imported_funcs)
    return err("export '" + job.export_name +
               "' is an imported function; the GPU runs functions the module defines");
  if (job.n > 0xffffffffu) return err("the GPU backend runs at most 2^32-1 instances per batch");
  req.instances = uint32_t(job.n);

  const auto& params = job.type.params;
  bool uniform = true;
  for (const ArgSrc& a : job.args) uniform &= a.kind == ArgSrc::Const;
  req.args_per_instance = !uniform;
  const uint64_t rows = uniform ? 1 : job.n;
  req.args.resize(rows * params.size());
  for (uint64_t i = 0; i < rows; ++i)
    for (size_t k = 0; k < params.size(); ++k)
      req.args[i * params.size() + k] = arg_value(job.args[k], params[k], i).bits;

  req.fuel = job.limits.fuel;
  req.timeout_s = spec.timeout;
  req.stack_slots = spec.gpu_stack_slots;
  req.max_call_depth = spec.gpu_call_depth;
  req.memory_pages = spec.gpu_memory_pages;
  req.max_wave = spec.gpu_max_wave;
  if (spec.gpu_layout == "interleaved") req.layout = gpu::MemoryLayout::Interleaved;
  else if (spec.gpu_layout == "contiguous") req.layout = gpu::MemoryLayout::Contiguous;
  else return err("--gpu-layout must be interleaved or contiguous, not '" + spec.gpu_layout + "'");
  req.batch = &gbatch;

  // Every instance starts from the same state, so an address export gives
  // one answer for all of them; it is asked once, on a fresh instance.
  for (const MemIn& mi : job.mem_in) {
    WW_ASSIGN_OR_RETURN(uint64_t addr, resolve_addr_fresh(job, mi.addr, gbatch));
    if (addr > 0xffffffffu) return err("--mem-in address out of range");
    req.mem_in.push_back({uint32_t(addr), uint32_t(mi.record), mi.data.data()});
  }
  for (MemOut& mo : job.mem_out) {
    WW_ASSIGN_OR_RETURN(uint64_t addr, resolve_addr_fresh(job, mo.addr, gbatch));
    if (addr > 0xffffffffu || mo.len > 0xffffffffu) return err("--mem-out range out of bounds");
    req.mem_out.push_back({uint32_t(addr), uint32_t(mo.len), mo.buf.data()});
  }
  req.progress = [&](uint64_t done, uint64_t total, double s) { progress.update(done, total, s); };
  // The memory plan is shown before anything runs: a batch that needs
  // waves says so up front.
  if (spec.batch && !spec.quiet)
    req.on_plan = [](const gpu::BatchPlan& plan, const std::string& device) {
      std::fprintf(stderr, "gpu plan (%s): %s\n", device.c_str(), plan.to_string().c_str());
    };

  WW_ASSIGN_OR_RETURN(gpu::BatchResult out, gpu::run_batch(req));
  job.results = std::move(out.results);
  job.traps = std::move(out.traps);
  job.trap_func = std::move(out.trap_func);
  job.trap_pc = std::move(out.trap_pc);
  GpuRunInfo info;
  info.device = out.device_name;
  info.kernel_ms = out.kernel_ms;
  info.finished = std::move(out.finished);
  return info;
}

}  // namespace ww::cli
