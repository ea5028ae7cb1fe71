// run_batch: a GPU batch from its request to its results. The instances'
// initial state is instantiated on the host, the plan sized to the device,
// and the waves run through a WaveLoop; compiled code's instances that ran
// out of its CUDA stack then run again on the interpreter.
#include "exec/gpu/wave/wave_loop.cuh"

#include <cstring>
#include <optional>

#include "runtime/runtime.h"
#include "translate/translator.h"

namespace ww::gpu {

namespace {

// Instances [i, end) of `req` as a request of their own, on the
// interpreter kernel, with what is left of req's timeout since `t_start`
// (none left: its waves mark the instances timed out without running).
BatchRequest stretch_of(const BatchRequest& req, const BatchRequest::Destination& d, uint32_t i, uint32_t end,
                        Clock::time_point t_start) {
  BatchRequest sub = req;
  sub.launcher = nullptr;
  if (req.timeout_s > 0)
    sub.timeout_s = std::max(req.timeout_s - std::chrono::duration<double>(Clock::now() - t_start).count(), 1e-9);
  sub.instances = end - i;
  sub.index_base = req.index_base + i;
  sub.total_instances = req.total_instances ? req.total_instances : req.instances;
  const uint64_t np = req.module->module.func_type(req.func_index).params.size();
  const uint64_t nr = req.module->module.func_type(req.result_func()).results.size();
  if (req.args_per_instance) sub.args.assign(req.args.begin() + i * np, req.args.begin() + end * np);
  if (req.fill_args)
    sub.fill_args = [fill = req.fill_args, i](uint32_t first, uint32_t n, uint64_t* io) { fill(i + first, n, io); };
  for (MemIn& m : sub.mem_in) m.data += uint64_t(i) * m.record_size;
  for (MemOut& m : sub.mem_out) m.data += uint64_t(i) * m.length;
  for (BatchRequest::DeviceColumn& c : sub.device_args)
    if (c.data) c.data = static_cast<const uint8_t*>(c.data) + uint64_t(i) * c.width;
  for (BatchRequest::DeviceOut& o : sub.device_results) o.data = static_cast<uint8_t*>(o.data) + uint64_t(i) * o.width;
  sub.dest = d.from(i, nr);
  sub.dest.trap_words_zero = false;
  sub.write_back = req.write_back && i == 0;
  sub.on_plan = nullptr;
  sub.progress = nullptr;
  sub.final_rows = nullptr;  // the stretch's rows are final when the whole request is
  sub.claim = nullptr;
  return sub;
}

// Rows [first, end) of the request: the waves that may hold instances to
// run again.
using Stretches = std::vector<std::pair<uint32_t, uint32_t>>;

void add_figures(const RunResult& r, RunResult& out) {
  out.kernel_ms += r.kernel_ms;
  out.upload_ms += r.upload_ms;
  out.memory_setup_ms += r.memory_setup_ms;
  out.download_ms += r.download_ms;
  out.host_ms += r.host_ms;
  out.plan.waves += r.plan.waves;
  out.pool_reruns += r.pool_reruns;
  out.replans += r.replans;
  out.wave_slices = std::max(out.wave_slices, r.wave_slices);
  out.streamed_rows += r.streamed_rows;
  out.mapped_rows += r.mapped_rows;
  out.stack_reruns += r.stack_reruns;
  out.grow_reruns += r.grow_reruns;
  out.host_calls += r.host_calls;
  out.host_passes += r.host_passes;
  out.host_fetch_rounds += r.host_fetch_rounds;
  out.device_output_bytes += r.device_output_bytes;
  out.device_log_drains += r.device_log_drains;
  out.stack_pool_bytes = std::max(out.stack_pool_bytes, r.stack_pool_bytes);
}

// Instances to run again, [first, end), of which `count` had the trap.
struct Rerun {
  uint32_t first, end, count;
};

// Runs of instances that ran again as one request, gaps and all, rather
// than one request each: a request's own cost (plan, buffers, a kernel) is
// that of thousands of instances in a wave that is not full, and a heap
// that grows in every third instance would otherwise take a request per
// instance. The instances of a gap run again unchanged (their results come
// out the same, but for gpu.get_time and clocks).
constexpr uint32_t kRerunGap = 8192;

// The instances in `ran` whose trap is `code`, in runs joined across gaps
// of up to kRerunGap inside one of its stretches (with `claim`, the rows
// between two stretches may be another loop's).
std::vector<Rerun> reruns_of(const BatchRequest& req, const BatchRequest::Destination& d, uint8_t code,
                             const Stretches& ran) {
  // The host's functions and WASI calls would serve the finished
  // instances of a gap again, and device columns of results cannot be
  // kept apart (run_stretch): one request a run there.
  const uint32_t gap = req.host_calls || !req.device_results.empty() ? 0 : kRerunGap;
  std::vector<Rerun> out;
  for (auto [i, last] : ran) {
    const size_t stretch_start = out.size();
    for (; i < last; ++i) {
      if (!(d.finished[i] && d.traps[i] == code)) continue;
      if (out.size() > stretch_start && i - out.back().end <= gap) out.back().end = i + 1;
      else out.push_back({i, i + 1, 0});
      ++out.back().count;
    }
  }
  return out;
}

// Runs `sub`, the stretch `k` of `req`, adding its figures to `out`. A
// stretch joined across gaps runs into columns of its own, from which only
// the rows of the instances with trap `code` are copied into `d`: the
// others finished already, and a run cut short (a cancel, the timeout, a
// failure) must not take their results. False: it could not run.
bool run_stretch(const BatchRequest& req, BatchRequest sub, const Rerun& k, uint8_t code,
                 const BatchRequest::Destination& d, RunResult& out) {
  const uint32_t span = k.end - k.first;
  if (k.count == span) {
    auto r = run_batch(sub);
    if (r.ok()) add_figures(*r, out);
    return r.ok();
  }
  sub.dest = {};
  std::vector<std::vector<uint8_t>> records(sub.mem_out.size());
  for (size_t m = 0; m < records.size(); ++m) {
    records[m].resize(uint64_t(span) * sub.mem_out[m].length);
    sub.mem_out[m].data = records[m].data();
  }
  auto r = run_batch(sub);
  if (!r.ok()) return false;
  add_figures(*r, out);
  const uint64_t nr = req.module->module.func_type(req.result_func()).results.size();
  for (uint32_t j = 0; j < span; ++j) {
    const uint64_t i = k.first + j;
    if (d.traps[i] != code) continue;
    d.traps[i] = r->traps[j];
    d.finished[i] = r->finished[j];
    if (d.trap_func) d.trap_func[i] = r->trap_func[j];
    if (d.trap_pc) d.trap_pc[i] = r->trap_pc[j];
    for (uint64_t q = 0; q < nr; ++q) {
      if (d.results32) d.results32[i * nr + q] = uint32_t(r->results[j * nr + q]);
      else if (d.results) d.results[i * nr + q] = r->results[j * nr + q];
      if (d.results_hi && !r->results_hi.empty()) d.results_hi[i * nr + q] = r->results_hi[j * nr + q];
    }
    for (size_t m = 0; m < records.size(); ++m) {
      const uint32_t len = req.mem_out[m].length;
      std::memcpy(req.mem_out[m].data + i * len, records[m].data() + uint64_t(j) * len, len);
    }
  }
  return true;
}

// Compiled code's frames live in the CUDA stack, capped below what the
// limits may allow: the stretches of instances that ran out of it run
// again on the interpreter kernel, whose stacks grow in segments up to the
// limits. A module that can add to shared state (gpu.atomic_add) must not
// run twice: its instances keep the trap.
void rerun_exhausted(const BatchRequest& req, const BatchRequest::Destination& d, const Stretches& ran,
                     Clock::time_point t_start, RunResult& out) {
  if (!req.launcher || imports_atomic_add(req.module->module)) return;
  const uint8_t exhausted = uint8_t(TrapCode::CallStackExhausted);
  for (const Rerun& k : reruns_of(req, d, exhausted, ran)) {
    // A plan that cannot hold the interpreter's stacks leaves the trap.
    if (!run_stretch(req, stretch_of(req, d, k.first, k.end, t_start), k, exhausted, d, out)) return;
    out.stack_reruns += k.count;
  }
}

// Instances that grew their memory past the pages the plan reserved run
// again from the start with at least the pages they asked for and twice as
// many as before (a heap that grew once tends to grow again), up to the
// memory's maximum; one that grows past that too runs again in turn. On
// the request's own tier and layout first: on the interpreter's sparse
// memory, 20,000 heaps of 4 MB (bench/scale/heap_sum.c) take many times
// as long as on compiled code. Where that cannot be planned (a dense
// reservation too large), on the interpreter and sparse memory, which
// holds only the pages written; where that cannot either, memory.grow
// fails past the old reservation.
void rerun_grown(const BatchRequest& req, const BatchRequest::Destination& d, const Stretches& ran, uint32_t reserved,
                 uint32_t max_pages, Clock::time_point t_start, RunResult& out) {
  const uint8_t grown = uint8_t(TrapCode::GrowPastReservation);
  for (const Rerun& k : reruns_of(req, d, grown, ran)) {
    uint64_t want = 2 * uint64_t(reserved);
    for (uint32_t i = k.first; d.trap_pc && i < k.end; ++i)
      if (d.traps[i] == grown) want = std::max<uint64_t>(want, d.trap_pc[i]);
    BatchRequest sub = stretch_of(req, d, k.first, k.end, t_start);
    sub.memory_pages = uint32_t(std::min<uint64_t>(want, max_pages));
    auto ran_as = [&](const BatchRequest& s) { return run_stretch(req, s, k, grown, d, out); };
    BatchRequest same = sub;
    same.launcher = req.launcher;
    sub.layout = MemoryLayout::Sparse;  // on the interpreter (stretch_of)
    const bool sparse_is_another = same.launcher || same.layout != MemoryLayout::Sparse;
    if (!ran_as(same) && !(sparse_is_another && ran_as(sub))) {
      sub.memory_pages = reserved;
      sub.grow_reruns = false;
      if (!ran_as(sub)) return;  // the stretch keeps its trap
    }
    out.grow_reruns += k.count;
  }
}

// Each instance's own stack and call records sized to what its calls can
// reach, when the call graph bounds it: the defaults (384 slots, 64 calls)
// would give the Rust thread-id module 3,894 bytes an instance, for a need
// of 4 slots and 1 call: at 10M instances a 39 GB block, whose cudaMalloc
// is a large share of the batch (bench/scale/alloc_cost.cu). Deeper calls
// go to the stack segments.
void shrink_stacks_to_need(const BatchRequest& req, PreparedBatch& p) {
  const Module& mod = req.module->module;
  std::vector<uint32_t> entries;
  if (req.resident) {
    for (const Export& e : mod.exports)
      if (e.kind == ExternKind::Func) entries.push_back(e.index);
  } else {
    entries.push_back(req.func_index);
    for (const BatchRequest::ThenCall& c : req.then) entries.push_back(c.func_index);
  }
  const std::optional<StackBound> need = stack_bound(mod, req.module->code, entries);
  if (!need) return;
  const uint32_t slots = std::max<uint32_t>(uint32_t(need->slots), 1);
  const uint32_t depth = need->depth + 1;  // a call from depth d needs d + 1 < max_call_depth
  if (slots >= p.rq->stack_slots && depth >= p.rq->max_call_depth) return;
  if (p.rq != &p.resolved) p.resolved = *p.rq;
  p.resolved.stack_slots = std::min(slots, p.rq->stack_slots);
  p.resolved.max_call_depth = std::min(depth, p.rq->max_call_depth);
  p.rq = &p.resolved;
}

}  // namespace

Status prepare_batch(const BatchRequest& req, PreparedBatch& p, StepTrace& trace) {
  // The last batch's memory, freed in the background, counts as free.
  wait_for_background_frees();
  auto probe_free_memory = [&] {
    p.dev = probe_device();
    if (req.memory_budget) p.dev.free_bytes = std::min(p.dev.free_bytes, req.memory_budget);
  };
  probe_free_memory();
  const DeviceInfo& dev = p.dev;
  trace("probe device");
  if (!dev.available) return make_error(kNoOffset, dev.reason);
  if (!req.module) return make_error(kNoOffset, "GPU batch: no module");
  const Module& mod = req.module->module;
  if (!req.resident && (req.func_index < mod.num_imported_funcs || req.func_index >= mod.num_funcs()))
    return make_error(kNoOffset, "GPU batch: the export is not a function defined by the module");
  WW_TRY(check_then(req));
  if (req.instances == 0) return make_error(kNoOffset, "GPU batch: no instances");
  p.launcher = req.launcher ? req.launcher.get() : &interpreter_launcher();
  KernelLauncher& launcher = *p.launcher;
  WW_TRY(launcher.hold_stack(req.max_call_depth));
  if (launcher.holds_stack()) probe_free_memory();

  // The instances' initial state: a fresh CPU instantiation, or the
  // caller's instance.
  p.ctx = GpuContext{req.batch ? req.batch : &p.fallback_batch, 0};
  p.store = req.source_store;
  p.instance = req.source_instance;
  if (!p.store) {
    p.own_store = std::make_unique<Store>();
    p.store = p.own_store.get();
    WW_ASSIGN_OR_RETURN(std::vector<ExternVal> imports,
                        link_for_batch(*p.store, mod, &p.ctx, req.host_calls != nullptr, req.unknown_imports));
    auto inst = p.store->instantiate(req.module, imports);
    if (auto* err = std::get_if<InstantiateError>(&inst)) return make_error(kNoOffset, err->message);
    p.instance = std::get<uint32_t>(inst);
  }
  StoreImpl& S = p.store->impl();
  trace("instantiate on the host");
  WW_ASSIGN_OR_RETURN(p.img, build_image(S, p.instance, import_intrinsics_of(S, p.instance, req.unknown_imports),
                                         req.max_table_size, p.own_store != nullptr || req.source_fresh));
  const GpuImage& img = p.img;
  // WASI calls the device serves itself.
  if (const DeviceWasi* dw = req.host_calls ? req.host_calls->device_wasi() : nullptr)
    for (size_t f = 0; f < p.img.import_intrinsic.size() && f < dw->calls.size(); ++f)
      if (p.img.import_intrinsic[f] == kDevHostImport) p.img.import_intrinsic[f] = dw->calls[f];
  trace("build image");
  p.rq = &req;
  if (req.layout == MemoryLayout::Auto) {
    if (&launcher != &interpreter_launcher())
      return make_error(kNoOffset, "GPU batch: compiled code needs the layout it was built for");
    p.resolved = req;
    p.resolved.layout = choose_layout(mod, req.instances, memory_pages_for(req, img), dev.free_bytes);
    p.rq = &p.resolved;
  }
  // The entry frame always starts in the instance's own stack: give it room
  // there when the limits allow it.
  uint32_t entry_slots = 0;
  auto entry = [&](uint32_t f) {
    if (f >= mod.num_imported_funcs)
      entry_slots = std::max(entry_slots, img.funcs[f - mod.num_imported_funcs].frame_slots);
  };
  if (req.resident) {  // any export may be called
    for (const Export& e : mod.exports)
      if (e.kind == ExternKind::Func) entry(e.index);
  } else {
    entry(req.func_index);
    for (const BatchRequest::ThenCall& c : req.then) entry(c.func_index);
  }
  if (launcher.needs_frames() && entry_slots > p.rq->stack_slots &&
      entry_slots <= std::max(p.rq->stack_slots_limit, p.rq->stack_slots)) {
    if (p.rq != &p.resolved) p.resolved = req;
    p.resolved.stack_slots = entry_slots;
    p.rq = &p.resolved;
  }
  if (launcher.needs_frames()) shrink_stacks_to_need(req, p);
  // The device's copies of read-only files come out of the reserve.
  const DeviceWasi* dw = req.host_calls ? req.host_calls->device_wasi() : nullptr;
  p.file_budget = dw ? dw->file_budget : 0;
  p.host_call_bytes =
      uses_host_calls(req, img)
          ? HostCallPass::bytes_per_instance(host_call_width_of(img), launcher.leave_words(), p.file_budget != 0)
          : 0;
  return plan_batch(p);
}

Status plan_batch(PreparedBatch& p) {
  WW_ASSIGN_OR_RETURN(p.plan, plan_for(*p.rq, p.img, p.dev.free_bytes, p.launcher->needs_frames(), p.file_budget,
                                       p.host_call_bytes, p.dev.idle_block_bytes));
  return Status::Ok();
}

namespace {

// A wave loop whose buffers are allocated, planned again with an eighth
// less memory while the device refuses them: the plan leaves a fixed
// reserve for what it does not count, and a large CUDA stack beside it
// can leave a batch short of it (compiled SQLite's 100K, in interleaved
// 60K-instance waves).
Result<std::unique_ptr<WaveLoop>> set_up_wave_loop(const BatchRequest& req, PreparedBatch& p, RunResult& out,
                                                   Clock::time_point t_start) {
  constexpr int kReplans = 4;
  for (int attempt = 0;; ++attempt) {
    auto loop = std::make_unique<WaveLoop>(*p.rq, *p.launcher, p.store->impl(), p.instance, p.img, p.plan, t_start);
    auto set_up = [&]() -> Status {
      if (uint32_t(attempt) < req.refused_setups) return make_error(kNoOffset, "out of memory (refused for a test)");
      return loop->setup(out);
    };
    Status s = set_up();
    if (s.ok()) return std::move(loop);
    const bool out_of_memory = s.error().message.find("out of memory") != std::string::npos;
    if (!out_of_memory || attempt == kReplans || p.plan.wave_size <= 32) return s.error();
    loop.reset();
    (void)cudaGetLastError();  // the refusal is not sticky; no later check should see it
    wait_for_background_frees();
    p.dev.free_bytes -= p.dev.free_bytes / 8;
    WW_TRY(plan_batch(p));
    ++out.replans;
    if (req.on_plan) req.on_plan(p.plan, p.dev.name);
  }
}

}  // namespace

Status check_then(const BatchRequest& req) {
  const Module& mod = req.module->module;
  for (const BatchRequest::ThenCall& c : req.then)
    if (c.func_index < mod.num_imported_funcs || c.func_index >= mod.num_funcs() || c.repeat == 0 ||
        c.args.size() != mod.func_type(c.func_index).params.size())
      return make_error(
          kNoOffset,
          "GPU batch: a chained call is not a function defined by the module, or its arguments do not fit it");
  return Status::Ok();
}

namespace {

// What a batch's waves run on: its prepared state and its wave loop, in
// that order of construction, which the loop's release must outlive.
struct BatchRun {
  PreparedBatch prepared;
  std::unique_ptr<WaveLoop> loop;
  ~BatchRun() {
    if (loop) (void)loop->release();
  }
};

}  // namespace

// The straight path of a batch: plan, buffers, then wave after wave
// (launch, download, rows final), the outputs, the release, and the
// instances that must run again.
Result<RunResult> run_batch(const BatchRequest& req) {
  const auto t_start = Clock::now();
  StepTrace trace("gpu", device_sync);
  // Plan: the device probed, the instances' initial state and its image,
  // the memory layout and the waves.
  auto run = std::make_unique<BatchRun>();
  PreparedBatch& p = run->prepared;
  WW_TRY(prepare_batch(req, p, trace));
  const double plan_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
  if (req.on_plan) req.on_plan(p.plan, p.dev.name);
  const uint64_t nparams = req.module->module.func_type(req.func_index).params.size();
  if (!req.fill_args && req.args.size() != (req.args_per_instance ? uint64_t(req.instances) * nparams : nparams))
    return make_error(kNoOffset, "GPU batch: argument count does not match the function");
  // Buffers: the module on the device, one block for the wave's columns.
  RunResult out;
  WW_ASSIGN_OR_RETURN(run->loop, set_up_wave_loop(req, p, out, t_start));
  out.plan = p.plan;
  out.device_name = p.dev.name;
  out.tier = p.launcher->tier_name();
  out.setup_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
  trace("set-up");
  const Module& mod = req.module->module;
  auto t_free = Clock::now();
  const bool grow_reruns = grows_past_reservation_rerun(req);
  const uint32_t max_pages = p.img.max_pages;
  // Waves whose instances may run again after the loop (rerun_exhausted,
  // rerun_grown); without `claim`, the rows from the first of them on are
  // final when run_batch returns.
  Stretches again;
  {
    WaveLoop& loop = *run->loop;
    // Instances that ran out of the sparse pool run again from the first
    // of them, in a smaller wave; one that alone does not fit keeps its
    // trap. A module that adds to shared state must not run twice.
    const bool may_rerun = !imports_atomic_add(mod);
    const uint8_t* traps = req.dest.traps ? req.dest.traps : out.traps.data();
    bool held = false;
    std::pair<uint32_t, uint32_t> last_rows{0, 0};  // rows final once the loop finishes
    out.plan.waves = 0;
    // Instances [first, end) are this loop's and not yet run: the whole
    // request, or the stretches `claim` hands out.
    uint32_t first = 0, end = req.claim ? 0 : req.instances;
    for (;;) {
      if (first == end) {
        if (!req.claim || !(end = req.claim(loop.next_wave_size(), &first))) break;
        end += first;
      }
      const uint32_t n = std::min(loop.next_wave_size(), end - first);
      uint32_t redo = 0;
      WW_TRY(loop.run_wave(first, n, out, &redo));
      ++out.plan.waves;
      if (!may_rerun || (redo == 1 && n == 1 && !loop.rerun_owed())) redo = 0;
      out.pool_reruns += redo;
      const uint32_t ran = n - redo;
      auto has = [&](TrapCode c) { return parallel_find_byte(traps + first, uint8_t(c), ran) < ran; };
      const bool wave_again = loop.wave_trapped() && ((req.launcher && has(TrapCode::CallStackExhausted)) ||
                                                      (grow_reruns && has(TrapCode::GrowPastReservation)));
      if (wave_again) again.push_back({first, first + ran});
      held = held || (wave_again && !req.claim);
      if (req.final_rows && !held && !wave_again) {
        // The last wave's rows wait for the intrinsics' buffers
        // (finish_outputs()): writing them meanwhile would take the host's
        // memory bandwidth from the download of the --image canvas.
        if (!req.claim && first + ran == end) last_rows = {first, end};
        else req.final_rows(first, first + ran);
      }
      first += ran;
      trace("waves so far, their rows final");
    }
    WW_TRY(loop.finish_outputs());
    if (last_rows.second) req.final_rows(last_rows.first, last_rows.second);
    out.kernel_ms = loop.kernel_ms();
    out.plan_ms = plan_ms;
    loop.report_phases(out);
    t_free = Clock::now();
    trace("wave loop end");
    // Release: the loop's streams, the wave block back to the idle block
    // and the staging kept go to the background releaser once this
    // thread's stream has settled, while the caller writes its outputs;
    // the next batch's prepare_batch waits for it. Not where the host
    // served calls: their pass reaches the request, which is the caller's
    // once this returns.
    if (!req.host_calls) {
      WW_TRY(loop.settle_thread());
      retire_in_background(std::shared_ptr<BatchRun>(std::move(run)));
    } else {
      WW_TRY(loop.release());
      run.reset();
    }
  }
  trace("free device buffers");
  // What the loop's end frees in place (small arenas; large ones go to the
  // background releaser) is part of the memory's cost.
  out.memory_setup_ms += std::chrono::duration<double, std::milli>(Clock::now() - t_free).count();
  BatchRequest::Destination d = req.dest;
  if (!d.traps) {
    d = {out.results.data(), out.traps.data(), out.trap_func.data(), out.trap_pc.data(), out.finished.data()};
    if (!out.results_hi.empty()) d.results_hi = out.results_hi.data();
  }
  if (!again.empty()) {
    rerun_exhausted(req, d, again, t_start, out);
    if (grow_reruns) rerun_grown(req, d, again, out.plan.memory_pages, max_pages, t_start, out);
    // With `claim` the other waves' rows were final as they came; these
    // are now, and a batch spread over GPUs streams past them.
    if (req.claim && req.final_rows)
      for (auto [a, b] : again) req.final_rows(a, b);
  }
  trace("stack and memory reruns");
  out.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
  return out;
}

}  // namespace ww::gpu
