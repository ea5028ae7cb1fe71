// The GPU's start-up, which runs beside the reading of the module and the
// inputs, and what a batch does with the GPU before its first instance:
// the first calls of its own thread, the choice of backend and layout,
// the GPUs it runs on.
#include "exec/gpu/executor/gpu_start_up.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "common/host_workers.h"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_plan.h"

namespace ww::batch {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

struct Probe {
  gpu::DeviceInfo info;
  double ms = 0;
  std::chrono::steady_clock::time_point at;  // when the stage ended
  double pin_ms = 0;                         // pinning the host buffers batches asked for
  std::chrono::steady_clock::time_point pin_from, pin_to;
};

// The ordinals `o` selects among `count` GPUs (invalid ones are
// resolve_gpus' to report).
std::vector<int> selected_devices(const GpuOptions& o, int count) {
  std::vector<int> list = o.devices;
  if (list.empty())
    for (int d = 0; d < count && (!o.max_devices || unsigned(d) < o.max_devices); ++d) list.push_back(d);
  return list;
}

// The GPU's start-up, in stages a batch waits for one at a time: with the
// first GPU's context (`context`) it can choose its backend and layout and
// load cached compiled code while the rest goes on (the buffers pinned,
// the idle block allocated, the staging pinned, the kernels loaded); with
// all of that and the other GPUs (`ready`) it can start. NVRTC loads
// beside it all, on a thread of its own: a cached compiled batch looks its
// code up by NVRTC's version.
Probe timed_probe(bool nvrtc, bool interpreter, GpuOptions gpus, std::promise<Probe>* context = nullptr,
                  std::promise<Probe>* ready = nullptr) {
  auto t = std::chrono::steady_clock::now();
  auto stage = [&](std::promise<Probe>* done, Probe p) {
    p.at = std::chrono::steady_clock::now();
    p.ms = std::chrono::duration<double, std::milli>(p.at - t).count();
    if (done) done->set_value(p);
    return p;
  };
  StepTrace trace("gpu start-up");
  // A failure shows again, with its message, where the version is needed.
  std::thread nvrtc_load;
  if (nvrtc) nvrtc_load = std::thread([] { (void)gpu::nvrtc_version(); });
  Probe p;
  std::vector<int> devices = selected_devices(gpus, gpu::device_count());
  // Each GPU's context starts on a thread of its own (a long wait each on
  // a cold machine); the first one's on this thread.
  std::vector<std::thread> others;
  for (size_t k = 1; k < devices.size(); ++k)
    others.emplace_back([d = devices[k], &gpus, interpreter] {
      gpu::DeviceScope on(d);
      if (on.status().ok() && gpu::probe_device().available) {
        gpu::warm_idle_block();
        gpu::prepare_transfers(gpus.tuning);
        gpu::load_kernels(interpreter);
      }
    });
  {
    gpu::DeviceScope on(devices.empty() ? 0 : devices[0]);
    p.info = gpu::probe_device();
    trace("driver, context");
    stage(context, p);
    // Buffers requested so far (the inputs and outputs read and allocated
    // meanwhile): a batch copies them without the staging. First: a
    // compiled batch looks up its code meanwhile, then waits for them.
    if (p.info.available) {
      p.pin_from = std::chrono::steady_clock::now();
      gpu::pin_requested_host_ranges();
      p.pin_to = std::chrono::steady_clock::now();
      p.pin_ms = std::chrono::duration<double, std::milli>(p.pin_to - p.pin_from).count();
    }
    trace("host buffers pinned");
    if (p.info.available) gpu::warm_idle_block();
    trace("idle block");
    if (p.info.available) gpu::prepare_transfers(gpus.tuning);
    trace("staging");
    if (p.info.available) gpu::load_kernels(interpreter);
    trace("kernels");
  }
  for (std::thread& o : others) o.join();
  trace("other GPUs");
  p = stage(ready, p);
  // Joined here, so that waiting for the warm-up also waits for it (a load
  // still under way at exit would crash the process); run() waits before
  // it returns.
  if (nvrtc_load.joinable()) nvrtc_load.join();
  trace("NVRTC");
  return p;
}

struct StartUp {
  std::shared_future<Probe> context, ready;
  std::shared_future<void> done;
};
std::mutex g_start_mu;
StartUp g_start;

StartUp start_up() {
  std::lock_guard<std::mutex> g(g_start_mu);
  return g_start;
}

// What of a batch's wait from `from` to `to` went to pinning its buffers:
// the batch's own work, in its upload.
double pinning_waited_ms(const Probe& p, std::chrono::steady_clock::time_point from,
                         std::chrono::steady_clock::time_point to) {
  const auto a = std::max(from, p.pin_from), b = std::min(to, p.pin_to);
  return b > a ? std::chrono::duration<double, std::milli>(b - a).count() : 0;
}

}  // namespace

void warm_up_gpu(Tier tier, const GpuOptions& gpus) {
  std::lock_guard<std::mutex> g(g_start_mu);
  if (g_start.done.valid()) return;
  // Before the staging's pinning starts the host's workers.
  if (gpus.tuning.host_workers) limit_host_workers(gpus.tuning.host_workers);
  auto context = std::make_shared<std::promise<Probe>>();
  auto ready = std::make_shared<std::promise<Probe>>();
  g_start.context = context->get_future().share();
  g_start.ready = ready->get_future().share();
  g_start.done = std::async(std::launch::async, [tier, gpus, context, ready] {
                   (void)timed_probe(tier != Tier::Interp, tier != Tier::Compiled, gpus, context.get(), ready.get());
                 }).share();
}

void wait_for_warm_up() {
  if (std::shared_future<void> done = start_up().done; done.valid()) done.wait();
}

bool gpu_start_up_in_flight() {
  const std::shared_future<Probe> context = start_up().context;
  return context.valid() && context.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

double ms_after_gpu_ready(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  const std::shared_future<Probe> ready = start_up().ready;
  if (ready.valid()) {
    if (ready.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return 0;
    from = std::max(from, ready.get().at);
  }
  return to > from ? std::chrono::duration<double, std::milli>(to - from).count() : 0;
}

// The first GPU the batch will run on (before resolve_gpus lists them): the
// one the start-up made ready, where work ahead of the batch belongs.
int first_selected_gpu(const GpuOptions& o) {
  const std::vector<int> devices = selected_devices(o, gpu::device_count());
  return devices.empty() ? 0 : devices[0];
}

// The rest of the GPU's start-up (its pinned staging, wave kernels, other
// GPUs), which a batch needs before its waves. The part of the wait that
// was for the start-up's pinning of this batch's buffers is the batch's
// own work: it goes into the upload, which run() counts in the batch's
// time (choose_backend adds a probe's pinning that it ran itself). The
// start-up pins first, while the batch's thread makes its first calls, so
// that little of it is left for the batch to wait for (bench/gpu/trace.sh's
// hashwasm row on the interpreter shows the wait).
void await_gpu_ready(BatchResult& out, StepTrace& trace) {
  if (out.backend != Backend::Gpu) return;
  if (const std::shared_future<Probe> ready = start_up().ready; ready.valid()) {
    const auto t = std::chrono::steady_clock::now();
    const Probe& p = ready.get();
    out.phases.gpu_startup = p.ms;
    out.phases.upload += pinning_waited_ms(p, t, std::chrono::steady_clock::now());
  }
  trace("wait for GPU start-up");
}

// Backend: the GPU when asked for, or for `auto` when one is usable; on
// the GPU, the memory layout (the GPU's context is enough to choose).
Status choose_backend(const BatchSpec& spec, Job& job, BatchResult& out, StepTrace& trace) {
  out.backend = Backend::Cpu;
  // WASI on the GPU: on request (its calls leave the kernel for the host).
  if (spec.wasi && spec.backend == Backend::Auto)
    out.backend_note = "WASI programs run on the CPU backend unless --backend gpu";
  if (spec.backend == Backend::Gpu || (!spec.wasi && spec.backend == Backend::Auto)) {
    const std::shared_future<Probe> context = start_up().context;
    const Probe p = context.valid() ? context.get() : timed_probe(false, spec.tier != Tier::Compiled, spec.gpu);
    trace("wait for the GPU's context");
    out.phases.gpu_startup = p.ms;
    // Without a warm-up the probe pinned this batch's buffers just now.
    if (!context.valid()) out.phases.upload += p.pin_ms;
    const gpu::DeviceInfo& dev = p.info;
    if (dev.available) out.backend = Backend::Gpu;
    else if (spec.backend == Backend::Gpu)
      return err("the GPU backend was asked for: " + dev.reason +
                 "; the CPU backend runs the same module (backend auto, the default, takes it when no GPU is usable)");
    else out.backend_note = "no GPU: " + dev.reason;
    job.gpu_layout = spec.gpu.layout;
    if (job.gpu_layout == MemoryLayout::Auto)
      job.gpu_layout = gpu::choose_layout(spec.module->module, spec.instances, spec.gpu.memory_pages, dev.free_bytes);
  }
  return Status::Ok();
}

// The GPUs the batch runs on (Job::gpus), each with the memory it may
// plan with: its free memory split among the entries that share it.
Status resolve_gpus(const BatchSpec& spec, Job& job) {
  const int count = gpu::device_count();
  std::vector<int> list = selected_devices(spec.gpu, count);
  for (int d : list)
    if (d < 0 || d >= count)
      return err("GPU " + std::to_string(d) + " was asked for; this machine has " + std::to_string(count) +
                 (count == 1 ? " (GPU 0)" : " (GPUs 0-" + std::to_string(count - 1) + ")"));
  // What every instance shares lives on one GPU.
  std::string one;
  bool device_arrays = !spec.device_results.empty();
  for (const ArgSource& a : spec.args) device_arrays |= a.kind == ArgSource::DeviceColumn;
  if (device_arrays) {
    list = {gpu::current_device()};  // where the caller's arrays are
  } else if (spec.intrinsics && !spec.intrinsics->state.empty()) {
    one = "the gpu intrinsics' state buffer is read and written by every instance at once";
  }
  if (list.size() > 1 && !one.empty()) {
    if (spec.note) spec.note("gpu: " + one + ", so this batch runs on GPU " + std::to_string(list[0]) + " only");
    list.resize(1);
  }
  if (one.empty() && !device_arrays && spec.gpu.tuning.wave_loops_per_gpu > 1) {
    std::vector<int> each;
    for (int d : list) each.insert(each.end(), spec.gpu.tuning.wave_loops_per_gpu, d);
    list = std::move(each);
  }
  std::vector<Job::Gpu> gpus;
  uint64_t min_claim = 0;
  for (int d : list) {
    Job::Gpu g{d, 0, 0};
    if (list.size() > 1 || spec.gpu.memory_share < 1) {
      gpu::DeviceScope on(d);
      WW_TRY(on.status());
      const gpu::DeviceInfo info = gpu::probe_device();
      const auto shared = std::count(list.begin(), list.end(), d);
      if (shared > 1 || spec.gpu.memory_share < 1)
        g.memory_budget =
            uint64_t(double(info.free_bytes) * std::clamp(spec.gpu.memory_share, 0.0, 1.0) / double(shared));
      g.resident_threads = info.resident_threads;
      min_claim = std::max(min_claim, info.resident_threads);
    }
    gpus.push_back(g);
  }
  // Every GPU should get at least one claim, a wave that fills it.
  const uint64_t useful = std::max<uint64_t>(1, spec.instances / std::max<uint64_t>(min_claim, 1));
  if (gpus.size() > useful) gpus.resize(size_t(useful));
  job.gpus = std::move(gpus);
  return Status::Ok();
}

}  // namespace ww::batch
