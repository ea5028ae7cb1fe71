// The batch driver: checks the spec, picks the backend and the tier, and
// runs the instances in segments through executors. With --tier auto and
// no cached code, a large batch starts on the interpreter while the module
// compiles in the background, and the segments after the compile finishes
// run compiled code; every segment writes the same arrays, so the results
// are those of one run.
#include "batch/batch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <thread>

#include "batch/background_compiles.h"
#include "batch/executor.h"
#include "batch/host_imports.h"
#include "batch/resident.h"
#include "batch/wasi_checks.h"
#include "common/cores.h"
#include "common/host_workers.h"
#include "common/step_trace.h"
#include "compiled/compiled_tier.h"
#include "compiled/host_compiler.h"
#include "compiled/tier_up.h"
#include "exec/gpu/executor/gpu_executor.h"
#include "exec/gpu/executor/gpu_start_up.h"

namespace ww::batch {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

// A v128 argument is a constant (Value::hi its high word): columns and
// @index are 64-bit rows. Results may be v128 (BatchResult::results_hi).
Status check_v128_args(const std::string& name, const FuncType& t, const std::vector<ArgSource>& args, Job& job) {
  for (size_t k = 0; k < t.params.size() && k < args.size(); ++k)
    if (t.params[k] == ValType::V128 && args[k].kind != ArgSource::Const)
      return err("export '" + name + "': argument " + std::to_string(k) +
                 " is a v128, which is given as a constant (the same vector for every instance)");
  job.v128_values |= has_v128(t);
  return Status::Ok();
}

// One instance of the batch's module in a store of its own, linked as the
// batch links; null, with the reason in `failed`, when instantiation fails
// (a start function that traps, say); an import that cannot be linked is
// an error.
Result<std::shared_ptr<InitImage>> instantiate_alone(const BatchSpec& spec, std::string& failed) {
  auto image = std::make_shared<InitImage>();
  image->ctx = intrinsics::GpuContext{spec.intrinsics ? spec.intrinsics : &image->fallback_batch, 0};
  image->store = std::make_unique<Store>();
  WW_ASSIGN_OR_RETURN(std::vector<ExternVal> imports,
                      link_imports(*image->store, spec.module->module, &image->ctx, nullptr, &spec.host_functions,
                                   spec.unknown_imports));
  auto r = image->store->instantiate(spec.module, imports);
  if (auto* e = std::get_if<InstantiateError>(&r)) {
    failed = e->message;
    return std::shared_ptr<InitImage>();
  }
  image->instance = std::get<uint32_t>(r);
  return image;
}

// One instance, its start function and the --init exports run, then its
// state taken. A start function that traps leaves no image (every instance
// then reports that trap, as without one); an --init export that traps is
// an error of the batch.
Result<std::shared_ptr<const InitImage>> make_init_image(const BatchSpec& spec) {
  std::string failed;
  WW_ASSIGN_OR_RETURN(std::shared_ptr<InitImage> image, instantiate_alone(spec, failed));
  if (!image) {
    if (!spec.init_calls.empty()) return err("instantiation before --init failed: " + failed);
    return std::shared_ptr<const InitImage>();
  }
  Store& store = *image->store;
  for (const BatchSpec::InitCall& c : spec.init_calls) {
    auto ev = store.get_export(image->instance, c.export_name);
    InvokeResult res = store.invoke(ev->addr, c.args);
    if (!res.ok()) return err("--init export '" + c.export_name + "' trapped: " + trap_message(res.trap));
  }
  WW_ASSIGN_OR_RETURN(image->snapshot, store.snapshot(image->instance));
  return std::shared_ptr<const InitImage>(std::move(image));
}

// A fresh instance for the GPU's batches, made while the GPU's context is
// still starting: the main thread only waits for it then, and the
// instantiation would otherwise be a visible share of a small batch such
// as thread-id's. Null when the context is up already (the batch
// instantiates in its own time, as a later batch of a process does), for
// WASI, host functions and resident instances (which link their own), or
// when instantiation fails (the batch then reports why).
std::shared_ptr<const InitImage> make_gpu_source(const BatchSpec& spec) {
  if (spec.backend == Backend::Cpu || spec.wasi || spec.files || spec.resident || !spec.host_functions.empty() ||
      !gpu_start_up_in_flight())
    return nullptr;
  std::string failed;
  auto source = instantiate_alone(spec, failed);
  return source.ok() ? *source : nullptr;
}

// The chain's calls: exports that exist, with a constant or @index per
// parameter; the batch then returns what the last one returns.
Status resolve_then(const BatchSpec& spec, Job& job) {
  if (spec.then.empty()) return Status::Ok();
  if (spec.wasi) return err("--then: chained calls are for exports, not WASI commands");
  const Module& m = spec.module->module;
  uint64_t calls = 1;
  for (const BatchSpec::ThenCall& c : spec.then) {
    Job::ThenCall t;
    WW_ASSIGN_OR_RETURN(t.type, export_function_type(m, c.export_name, &t.func_index));
    if (c.args.size() != t.type.params.size())
      return err("--then " + c.export_name + ": export '" + c.export_name + "' takes " +
                 std::to_string(t.type.params.size()) + " argument(s) (" + valtype_list(t.type.params) + "), got " +
                 std::to_string(c.args.size()));
    WW_TRY(check_v128_args(c.export_name, t.type, c.args, job));
    for (const ArgSource& a : c.args)
      if (a.kind == ArgSource::Column || a.kind == ArgSource::DeviceColumn)
        return err("--then " + c.export_name + ": arguments are constants or @index");
    if (c.repeat == 0) return err("--then " + c.export_name + ": a call repeated 0 times");
    calls += c.repeat;
    if (calls > 0xffffffffu) return err("--then: more than 2^32-1 calls in the chain");
    job.io_slots = std::max<size_t>({job.io_slots, t.type.params.size(), t.type.results.size()});
    job.then.push_back(std::move(t));
  }
  job.type.results = job.then.back().type.results;
  return Status::Ok();
}

Result<Job> make_job(const BatchSpec& spec) {
  if (!spec.module) return err("no module");
  if (spec.instances == 0) return err("--instances must be at least 1");
  if (spec.index_base + spec.instances > spec.total() || spec.index_base + spec.instances < spec.index_base)
    return err("instances [" + std::to_string(spec.index_base) + ", " +
               std::to_string(spec.index_base + spec.instances) + ") are not within a batch of " +
               std::to_string(spec.total()));
  if (spec.resident && (spec.index_base || spec.total_instances))
    return err("resident instances are a batch of their own (no first index or total)");
  WW_TRY(spec.gpu.tuning.check());
  if (spec.gpu.tuning.host_workers) limit_host_workers(spec.gpu.tuning.host_workers);
  const Module& m = spec.module->module;
  Job job;
  job.spec = &spec;
  WW_ASSIGN_OR_RETURN(job.type, export_function_type(m, spec.export_name, &job.func_index));
  if (spec.wasi) {
    if (!job.type.params.empty() || !job.type.results.empty())
      return err("a WASI command's _start takes and returns nothing; this one is " + functype_to_string(job.type));
    if (!spec.init_calls.empty() || m.start)
      return err("--init and start sections are not supported for batches of WASI programs yet");
    if (!spec.mem_in.empty() || !spec.mem_out.empty())
      return err("--mem-in/--mem-out are not supported for WASI programs yet");
    job.type.results = {ValType::I32};  // the exit code
  }
  if (!spec.wasi && spec.args.size() != job.type.params.size())
    return err("export '" + spec.export_name + "' takes " + std::to_string(job.type.params.size()) + " argument(s) (" +
               valtype_list(job.type.params) + "), got " + std::to_string(spec.args.size()));
  if (!spec.wasi) WW_TRY(check_v128_args(spec.export_name, job.type, spec.args, job));
  for (const ArgSource& a : spec.args)
    if (a.kind == ArgSource::Column && a.column.size() < spec.instances)
      return err("an argument column has fewer rows than instances");
  if (!spec.device_results.empty() && spec.device_results.size() != job.type.results.size())
    return err("device results: " + std::to_string(spec.device_results.size()) + " buffers for " +
               std::to_string(job.type.results.size()) + " results");
  WW_TRY(check_imports(m, spec.wasi != nullptr, &spec.host_functions, spec.unknown_imports));
  for (const auto* w : {spec.wasi.get(), spec.files.get()})
    if (w) WW_TRY(check_wasi_paths(*w, spec.index_base, spec.instances));
  if ((!spec.mem_in.empty() || !spec.mem_out.empty()) && m.num_memories() == 0)
    return err("--mem-in/--mem-out need a module with a memory");
  for (const MemInput& mi : spec.mem_in)
    if (mi.record == 0 || mi.bytes.size() / mi.record < spec.instances)
      return err("a memory input holds fewer records than instances");
  job.io_slots = std::max<size_t>({job.type.params.size(), job.type.results.size(), 1});
  WW_TRY(resolve_then(spec, job));
  if (!spec.device_results.empty() && has_v128(job.type.results))
    return err("device results are 4 or 8 bytes a row: a v128 result comes back to the host only");
  for (const BatchSpec::InitCall& c : spec.init_calls) {
    WW_ASSIGN_OR_RETURN(FuncType t, export_function_type(m, c.export_name));
    bool same = t.params.size() == c.args.size();
    for (size_t k = 0; same && k < c.args.size(); ++k) same = c.args[k].type == t.params[k];
    if (!same)
      return err("--init export '" + c.export_name + "' takes (" + valtype_list(t.params) + "), got " +
                 std::to_string(c.args.size()) + " argument(s)");
  }
  if (!spec.init_calls.empty() || m.start) {
    WW_ASSIGN_OR_RETURN(job.image, make_init_image(spec));
  }
  if (!job.image) job.gpu_source = make_gpu_source(spec);
  return job;
}

void size_result(const BatchSpec& spec, const Job& job, BatchResult& out) {
  const uint64_t n = spec.instances;
  out.type = job.type;
  if (all_32bit(job.type.results)) resize_zeroed(out.results32, n * job.type.results.size());
  else resize_zeroed(out.results, n * job.type.results.size());
  if (has_v128(job.type.results)) resize_zeroed(out.results_hi, n * job.type.results.size());
  if (spec.wasi) {
    out.result_names = {"exit_code"};
    if (spec.wasi->stdout_pattern.empty()) out.stdout_blocks.resize(n);
    if (spec.wasi->stderr_pattern.empty()) out.stderr_blocks.resize(n);
  }
  resize_zeroed(out.traps, n);
  resize_zeroed(out.trap_func, n);
  resize_zeroed(out.trap_pc, n);
  resize_zeroed(out.finished, n);
  out.mem_out.resize(spec.mem_out.size());
  // Pinned by the GPU's start-up when it is still under way (warm_up_gpu),
  // which hides the registration; after it, a fresh buffer's registration
  // would cost what the staging's copies do. Not for the interpreter,
  // which would wait for it (PinnedInputs, cli/run.cc).
  const bool pin_for_gpu = spec.backend != Backend::Cpu && spec.tier != Tier::Interp;
  for (size_t k = 0; k < spec.mem_out.size(); ++k) {
    resize_zeroed(out.mem_out[k], n * spec.mem_out[k].length);
    if (pin_for_gpu) {
      if (auto pin = pin_for_gpu_at_start_up(out.mem_out[k].data(), out.mem_out[k].size()))
        out.pins.push_back(std::move(pin));
    }
  }
  // The results likewise when they are 4 bytes a value: the kernel writes
  // them straight in (WaveTransfers::mapped_results), or the device copies
  // them (WaveTransfers::download_results32). For the interpreter too: 4
  // bytes an instance pin in the start-up's first step, long before the
  // batch waits for it, and no results come down after its kernel.
  if (spec.backend != Backend::Cpu && !out.results32.empty()) {
    if (auto pin = pin_for_gpu_at_start_up(out.results32.data(), out.results32.size() * 4))
      out.pins.push_back(std::move(pin));
  }
  // The canvas likewise, which the device then copies down beside the
  // results (WaveTransfers::queue_canvas); kept with the pixels, which outlive
  // the batch.
  intrinsics::OutputImage* image = spec.intrinsics && spec.intrinsics->image ? &*spec.intrinsics->image : nullptr;
  if (image && !image->pin && pin_for_gpu) {
    image->pin = pin_for_gpu_at_start_up(image->pixels.data(), image->pixels.size() * 4);
  }
}

// Batches this large start a background compile under --tier auto when the
// cache lacks the module: smaller ones finish on the interpreter sooner
// than a compiler could start paying off.
constexpr uint64_t kAutoCompileMinCpu = 1024;
constexpr uint64_t kAutoCompileMinGpu = 8192;
// A module larger than this (bytecode words) never compiles whole behind a
// CPU batch: that takes the host compiler minutes (CPython's 26 MB, 18 min
// on 2 cores; SQLite's), so its hot functions tier up instead, as every
// smaller batch's do.
constexpr uint64_t kWholeCompileMaxWordsCpu = 1u << 20;

bool tiers_up(const BatchSpec& spec, Backend backend) {
  if (backend != Backend::Cpu || spec.tier != Tier::Auto) return false;
  return spec.instances < kAutoCompileMinCpu || spec.module->code.bytecode.code.size() > kWholeCompileMaxWordsCpu;
}

compiled::Request compile_request(const BatchSpec& spec, const Job& job, Backend backend) {
  compiled::Request r;
  r.module = spec.module;
  r.entries = {job.func_index};
  for (const Job::ThenCall& c : job.then)
    if (std::find(r.entries.begin(), r.entries.end(), c.func_index) == r.entries.end())
      r.entries.push_back(c.func_index);
  // A CPU instance calls the functions that give --mem-in and --mem-out
  // addresses for every input: they are compiled too.
  if (backend == Backend::Cpu) {
    auto add = [&](const Address& a) {
      if (a.export_name.empty() || a.is_global) return;
      for (const Export& e : spec.module->module.exports)
        if (e.kind == ExternKind::Func && e.name == a.export_name &&
            std::find(r.entries.begin(), r.entries.end(), e.index) == r.entries.end())
          r.entries.push_back(e.index);
    };
    for (const MemInput& m : spec.mem_in) add(m.addr);
    for (const MemOutput& m : spec.mem_out) add(m.addr);
  }
  r.target = backend == Backend::Gpu ? compiled::Target::Gpu : compiled::Target::Cpu;
  r.metered = spec.fuel != 0;
  // A WASI program's compiled CPU code always looks at the interrupt byte,
  // so that Ctrl-C stops a running instance (a program may wait or loop
  // for ever), and a single run (api_wasi_command.cc) and a batch of the
  // same program share one compile in the cache.
  r.deadline = spec.timeout_s > 0 || (spec.wasi && backend == Backend::Cpu);
  r.layout = job.gpu_layout;
  r.cache = spec.cache;
  return r;
}

// Compiled code as an executor, or the reason it cannot be had.
struct CompiledExecutor {
  std::unique_ptr<Executor> exec;
  std::string error;
  compiled::Outcome outcome;
};

// GPU code is unloaded off this thread: unloading waits for the batch's
// memory to be freed, which happens in the background meanwhile.
void retire_executor(std::unique_ptr<Executor> ex) {
  if (ex && ex->backend() == Backend::Gpu) release_on_gpu(std::shared_ptr<Executor>(std::move(ex)));
}

// `device`: the GPU whose architecture the code is built for and where it
// is loaded first (other GPUs load it on their first launch); -1: the
// calling thread's.
CompiledExecutor compile_executor(const compiled::Request& req, int device = -1) {
  CompiledExecutor ce;
  if (req.target == compiled::Target::Cpu) {
    auto r = compiled::compile_cpu(req, &ce.outcome);
    if (r.ok()) ce.exec = make_cpu_executor(*r);
    else ce.error = r.error().message;
  } else {
    auto r = compile_gpu_executor(req, &ce.outcome, device);
    if (r.ok()) ce.exec = std::move(*r);
    else ce.error = r.error().message;
  }
  return ce;
}

// A compile the batch waits for, which Ctrl-C (the batch's cancel) ends
// (host compilers only: NVRTC runs in this process and cannot be stopped;
// a second signal quits at once). The batch then stops as interrupted.
CompiledExecutor compile_until_cancelled(const BatchSpec& spec, const compiled::Request& req, int device) {
  compiled::StopCompilersOnCancel stop(spec.cancel);
  return compile_executor(req, device);
}

int first_gpu(const Job& job) { return job.gpus.empty() ? -1 : job.gpus[0].device; }

// The compiled code a batch asks for, and whether the cache has it: the
// export's own, or the module's for every export (`wasmwarp compile`
// without --invoke), which serves this export too when it lacks its own.
struct CodeLookUp {
  compiled::Request req;
  bool cached = false;
  // Cached GPU code loaded on `device` while the GPU's start-up finishes
  // its staging and wave kernels. Loaded on the batch's clock, on a thread
  // beside the batch's set-up, it would hold up the set-up's first CUDA
  // call (bench/gpu/trace.sh's montecarlo row shows the set-up's steps).
  // Code that must be compiled first is compiled on the batch's clock.
  std::optional<CompiledExecutor> loaded;
  int device = -1;
};

CodeLookUp look_up_code(const BatchSpec& spec, const Job& job, Backend backend, bool load) {
  CodeLookUp c;
  c.req = compile_request(spec, job, backend);
  compiled::Request all = c.req;
  all.entries.clear();
  // A module that tiers up looks only at the index: generating its whole
  // source to key it would take seconds of the batch.
  const auto is_cached = [&](const compiled::Request& r) {
    return tiers_up(spec, backend) ? compiled::cached_by_index(r) : compiled::cached(r);
  };
  c.cached = is_cached(c.req);
  if (!c.cached && is_cached(all)) {
    c.req = all;
    c.cached = true;
  }
  if (load && c.cached && backend == Backend::Gpu) {
    c.device = first_selected_gpu(spec.gpu);
    compiled::Request now = c.req;
    now.load_in_background = false;  // nothing else of the batch runs yet
    c.loaded = compile_executor(now, c.device);
  }
  return c;
}

void record_compile(const CompiledExecutor& ce, CompileReport& rep) {
  rep.attempted = true;
  rep.cache_hit = ce.outcome.cache_hit;
  rep.generate_ms = ce.outcome.generate_ms;
  rep.compile_ms = ce.outcome.compile_ms;
  rep.load_ms = ce.outcome.load_ms;
  rep.cache_note = ce.outcome.cache_note;
  if (!ce.exec) rep.fallback = "compiled tier unavailable (" + ce.error + "); ran the interpreter";
}

class Driver {
 public:
  Driver(const BatchSpec& spec, const Job& job, BatchResult& out) : spec_(spec), job_(job), out_(out) {}

  Status run_segment(Executor& ex, uint64_t first, uint64_t count) {
    auto t = std::chrono::steady_clock::now();
    auto ready = [&](uint64_t upto) {
      if (spec_.on_ready) spec_.on_ready(out_, first + upto);
    };
    WW_TRY(ex.run(
        job_, first, count, out_,
        [&](uint64_t done) {
          if (spec_.progress)
            spec_.progress(first + done, spec_.instances,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - job_.t0).count());
        },
        ready));
    StepTrace trace("batch segment");
    ready(count);
    trace("rows ready");
    Segment s;
    s.first = first;
    s.count = count;
    s.backend = ex.backend();
    s.tier = ex.tier();
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    // Consecutive segments that ran the same way are one.
    if (!out_.segments.empty() && out_.segments.back().tier == s.tier &&
        out_.segments.back().first + out_.segments.back().count == first) {
      out_.segments.back().count += count;
      out_.segments.back().seconds += s.seconds;
    } else {
      out_.segments.push_back(s);
    }
    if (ex.backend() == Backend::Gpu) out_.device = ex.where();
    return Status::Ok();
  }

  // The interpreter runs ranges until the compile is done, then compiled
  // code runs the rest.
  Status run_with_background_compile(Executor& interp, const compiled::Request& req) {
    std::future<CompiledExecutor> pending =
        std::async(std::launch::async, [req, d = first_gpu(job_)] { return compile_executor(req, d); });
    const uint64_t n = spec_.instances;
    const uint64_t chunk =
        req.target == compiled::Target::Gpu ? std::max<uint64_t>(n / 8, 32768) : std::max<uint64_t>(n / 32, 64);
    std::unique_ptr<Executor> compiled;
    bool settled = false;
    uint64_t first = 0;
    while (first < n) {
      if (!settled && pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        CompiledExecutor ce = pending.get();
        record_compile(ce, out_.compile);
        compiled = std::move(ce.exec);
        settled = true;
      }
      if (job_.cancelled()) break;
      Executor& ex = compiled ? *compiled : interp;
      uint64_t count = settled ? n - first : std::min(chunk, n - first);
      WW_TRY(run_segment(ex, first, count));
      first += count;
    }
    // A batch that finished first still leaves the compiled code in the
    // cache for the next run. It waits for that in its wall time, so the
    // wait is its compile phase, which the time split would leave out
    // though it can be nearly all of a small batch's wall time (a host
    // compiler or NVRTC takes seconds). For at most compile_wait_s, and
    // not past Ctrl-C: then the compile goes on without it (and the
    // process's end stops it).
    if (!settled) {
      using Clock = std::chrono::steady_clock;
      const auto t = Clock::now();
      const bool forever = spec_.compile_wait_s < 0;
      const auto until =
          forever
              ? Clock::time_point::max()
              : t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec_.compile_wait_s));
      bool ended = false;
      while (!job_.cancelled()) {
        Clock::duration slice = std::chrono::milliseconds(50);
        if (!forever) slice = std::min(slice, std::max(until - Clock::now(), Clock::duration::zero()));
        ended = pending.wait_for(slice) == std::future_status::ready;
        if (ended || (!forever && Clock::now() >= until)) break;
      }
      out_.phases.compile += std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      if (!ended && job_.cancelled()) out_.compile.fallback = "stopped by the interrupt";
      if (ended) {
        CompiledExecutor late = pending.get();
        record_compile(late, out_.compile);
        retire_executor(std::move(late.exec));
      } else {
        out_.compile.attempted = true;
        out_.compile.left_running = true;
        keep_compiling(std::async(std::launch::async, [p = std::move(pending)]() mutable {
          CompiledExecutor late = p.get();
          retire_executor(std::move(late.exec));
        }));
      }
    }
    out_.compile.used = compiled != nullptr;
    retire_executor(std::move(compiled));
    return Status::Ok();
  }

  // The CPU's auto tier for a small batch or a large module: the
  // interpreter at once, hot functions compiled in the background and
  // taken up as the batch runs (compiled/tier_up.h).
  Status run_tiering_up(Executor& interp, const compiled::Request& req) {
    auto code = start_kept_tier_up(req);
    if (!code.ok()) {
      out_.compile.attempted = true;
      out_.compile.fallback = "tier-up unavailable (" + code.error().message + "); ran the interpreter";
      return run_segment(interp, 0, spec_.instances);
    }
    std::unique_ptr<Executor> ex = make_cpu_executor(compiled::as_native(*code));
    WW_TRY(run_segment(*ex, 0, spec_.instances));
    out_.compile.tier_up = tier_up_report(**code);
    return Status::Ok();
  }

 private:
  const BatchSpec& spec_;
  const Job& job_;
  BatchResult& out_;
};

}  // namespace

Result<FuncType> export_function_type(const Module& m, const std::string& name, uint32_t* func_index) {
  const Export* ex = nullptr;
  for (const Export& e : m.exports)
    if (e.name == name) ex = &e;
  if (!ex) {
    std::string names;
    for (const Export& e : m.exports)
      if (e.kind == ExternKind::Func) names += (names.empty() ? "" : ", ") + e.name;
    return err("unknown export '" + name + "' (exported functions: " + (names.empty() ? "none" : names) + ")");
  }
  if (ex->kind != ExternKind::Func)
    return err("export '" + name + "' is a " + extern_kind_name(ex->kind) + ", not a function");
  if (func_index) *func_index = ex->index;
  return m.func_type(ex->index);
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Auto: return "auto";
    case Backend::Cpu: return "cpu";
    case Backend::Gpu: return "gpu";
  }
  return "?";
}

const char* tier_name(Tier t) {
  switch (t) {
    case Tier::Auto: return "auto";
    case Tier::Interp: return "interp";
    case Tier::Compiled: return "compiled";
  }
  return "?";
}

Value arg_value(const ArgSource& a, ValType type, uint64_t row, uint64_t i) {
  switch (a.kind) {
    case ArgSource::Const: return a.value;
    case ArgSource::Column: return Value{type, a.column[row]};
    case ArgSource::DeviceColumn: return Value{type, 0};  // the GPU reads it (never asked for on the host)
    case ArgSource::Index:
      switch (type) {
        case ValType::I32: return Value{type, i & 0xFFFFFFFFu};
        case ValType::I64: return Value{type, i};
        case ValType::F32: {
          float f = float(i);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          return Value::f32_bits(b);
        }
        default: {
          double d = double(i);
          uint64_t b;
          std::memcpy(&b, &d, 8);
          return Value::f64_bits(b);
        }
      }
  }
  return a.value;
}

TrapCode Job::stop_reason() const {
  if (cancelled()) return TrapCode::Interrupted;
  if (seconds_left() <= 0) return TrapCode::Timeout;
  return TrapCode::None;
}

double Job::seconds_left() const {
  if (spec->timeout_s <= 0) return std::numeric_limits<double>::infinity();
  return spec->timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

Result<BatchResult> finish_run(const BatchSpec& spec, const Job& job, BatchResult& out);

// Arrays in GPU memory need the GPU backend: nothing copies them to the host.
Status check_device_arrays(const BatchSpec& spec, Backend backend) {
  bool device = !spec.device_results.empty();
  for (const ArgSource& a : spec.args) device |= a.kind == ArgSource::DeviceColumn;
  if (device && backend != Backend::Gpu)
    return err("arguments or results in GPU memory (CUDA arrays) need the GPU backend; this call runs on the CPU");
  return Status::Ok();
}

// Instances that stay: the executor the first batch chose runs them all.
Status run_resident(const BatchSpec& spec, Job& job, BatchResult& out) {
  Resident& r = *spec.resident;
  if (!r.started()) return err("resident instances used before start_resident");
  if (spec.instances != r.instances())
    return err("a batch of " + std::to_string(spec.instances) + " instances on " + std::to_string(r.instances()) +
               " resident ones");
  if (spec.wasi || !spec.init_calls.empty()) return err("resident instances run exports, not WASI commands or --init");
  out.backend = r.backend();
  WW_TRY(check_device_arrays(spec, out.backend));
  out.compile = r.compile;
  job.gpu_layout = r.gpu_layout();
  job.t0 = std::chrono::steady_clock::now();
  if (spec.intrinsics) spec.intrinsics->start_clock();
  Driver driver(spec, job, out);
  return driver.run_segment(r.executor(), 0, spec.instances);
}

}  // namespace

Status start_resident(const BatchSpec& spec, Resident& r) {
  if (r.started()) return Status::Ok();
  if (!spec.module) return err("no module");
  if (r.instances() == 0) return err("resident instances: at least one");
  if (spec.wasi || !spec.init_calls.empty())
    return err("resident instances start from the module's own state (run their init export instead)");
  const Module& m = spec.module->module;
  StepTrace trace("resident start");
  Job job;
  job.spec = &spec;
  for (const Export& e : m.exports)
    if (e.kind == ExternKind::Func && e.index >= m.num_imported_funcs) {
      job.func_index = e.index;
      break;
    }
  job.type = m.func_type(job.func_index);
  WW_TRY(check_imports(m, false, &spec.host_functions, spec.unknown_imports));
  if (m.start) {
    WW_ASSIGN_OR_RETURN(job.image, make_init_image(spec));
  }
  BatchResult scratch;
  AwaitWarmUp await_warm_up;
  WW_TRY(choose_backend(spec, job, scratch, trace));
  await_gpu_ready(scratch, trace);
  // Code for every export: any of them may be called.
  compiled::Request req = compile_request(spec, job, scratch.backend);
  req.entries.clear();
  std::unique_ptr<Executor> exec;
  if (spec.tier != Tier::Interp) {
    CompiledExecutor ce = compile_executor(req);
    record_compile(ce, r.compile);
    r.compile.used = ce.exec != nullptr;
    exec = std::move(ce.exec);
  }
  if (!exec) exec = scratch.backend == Backend::Gpu ? make_gpu_interpreter() : make_cpu_executor(nullptr);
  WW_TRY(exec->start_resident(job, r));
  r.start(scratch.backend, std::move(exec), job.gpu_layout);
  return Status::Ok();
}

Result<BatchResult> run(const BatchSpec& spec) {
  StepTrace trace("batch");
  WW_ASSIGN_OR_RETURN(Job job, make_job(spec));
  trace("job (validate, --init)");
  BatchResult out;
  const auto t_columns = std::chrono::steady_clock::now();
  size_result(spec, job, out);
  const auto t_columns_end = std::chrono::steady_clock::now();
  const double columns_ms = std::chrono::duration<double, std::milli>(t_columns_end - t_columns).count();
  // Made while the GPU's context was still starting, the columns cost the
  // batch nothing: the main thread would have waited for it.
  const bool columns_hidden = gpu_start_up_in_flight();
  trace("result arrays");
  if (spec.resident) {
    WW_TRY(run_resident(spec, job, out));
    return finish_run(spec, job, out);
  }
  AwaitWarmUp await_warm_up;
  WW_TRY(choose_backend(spec, job, out, trace));
  const Tier tier = spec.tier;
  std::optional<CodeLookUp> code;
  if (tier != Tier::Interp && out.backend == Backend::Gpu) {
    // Cached code is looked up and loaded while the GPU's start-up goes on.
    code = look_up_code(spec, job, out.backend, true);
    trace("look up and load cached code");
  }
  await_gpu_ready(out, trace);
  WW_TRY(check_device_arrays(spec, out.backend));
  if (out.backend == Backend::Gpu) WW_TRY(resolve_gpus(spec, job));

  if (spec.intrinsics) spec.intrinsics->start_clock();
  // Nothing but the pinning of its buffers is in the upload yet. The
  // result columns' set-up (page faults on every core) is the batch's
  // memory set-up and in its wall time, but for what of it the batch
  // would have spent waiting: on the CPU for the GPU's context
  // (choose_backend), on the GPU for its whole start-up (a call whose GPU
  // is already up pays for all of it).
  double before_ms = out.phases.upload;
  const double columns_counted = out.backend == Backend::Gpu ? ms_after_gpu_ready(t_columns, t_columns_end)
                                 : columns_hidden            ? 0
                                                             : columns_ms;
  out.phases.memory_setup += columns_counted;
  before_ms += columns_counted;
  job.t0 = std::chrono::steady_clock::now() - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                  std::chrono::duration<double, std::milli>(before_ms));
  if (tier != Tier::Interp && !code) {
    code = look_up_code(spec, job, out.backend, false);
    trace("look up compiled code");
  }
  const bool compile_now = tier == Tier::Compiled || (tier == Tier::Auto && code && code->cached);
  const uint64_t auto_min = out.backend == Backend::Gpu ? kAutoCompileMinGpu : kAutoCompileMinCpu;
  const bool tier_up = !compile_now && tiers_up(spec, out.backend);
  const bool compile_behind = !compile_now && !tier_up && tier == Tier::Auto && spec.instances >= auto_min;
  std::unique_ptr<Executor> interp = out.backend == Backend::Gpu ? make_gpu_interpreter() : make_cpu_executor(nullptr);
  Driver driver(spec, job, out);
  compiled::Request req = code ? code->req : compile_request(spec, job, out.backend);
  if (compile_now) {
    // Code loaded early on the first GPU the batch uses; otherwise
    // compiled or loaded here.
    const bool loaded_here = code && code->loaded && code->device == first_gpu(job);
    CompiledExecutor ce = loaded_here ? std::move(*code->loaded) : compile_until_cancelled(spec, req, first_gpu(job));
    trace("compile or load compiled code");
    record_compile(ce, out.compile);
    out.phases.compile = ce.outcome.generate_ms + ce.outcome.compile_ms + ce.outcome.load_ms;
    out.compile.used = ce.exec != nullptr;
    if (!ce.exec && job.cancelled()) {
      // Ctrl-C stopped the compile: no instance runs (each is reported
      // interrupted), and the interpreter was no fallback.
      out.compile.fallback = "stopped by the interrupt";
    } else {
      WW_TRY(driver.run_segment(ce.exec ? *ce.exec : *interp, 0, spec.instances));
    }
    trace("run the segment");
    retire_executor(std::move(ce.exec));
  } else if (compile_behind) {
    WW_TRY(driver.run_with_background_compile(*interp, req));
  } else if (tier_up) {
    WW_TRY(driver.run_tiering_up(*interp, req));
  } else {
    WW_TRY(driver.run_segment(*interp, 0, spec.instances));
  }
  trace("run");
  auto r = finish_run(spec, job, out);
  trace("unfinished instances");
  return r;
}

namespace {

Result<BatchResult> finish_run(const BatchSpec& spec, const Job& job, BatchResult& out) {
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - job.t0).count();
  // Instances the timeout stopped, or that never started, say so as their
  // trap, so every output row tells what became of its instance (those an
  // executor already marked keep their mark: their rows may be written).
  const uint8_t why = uint8_t(job.cancelled() ? TrapCode::Interrupted : TrapCode::Timeout);
  const uint8_t* fin = out.finished.data();
  const size_t first_unfinished = parallel_find_byte(fin, 0, spec.instances);
  for (const uint8_t* z = fin + first_unfinished;
       z < fin + spec.instances && (z = static_cast<const uint8_t*>(std::memchr(z, 0, fin + spec.instances - z))); ++z)
    if (!out.traps[z - fin]) out.traps[z - fin] = why;
  if (out.backend == Backend::Cpu) {
    unsigned hw = usable_cores();
    unsigned t = spec.threads ? spec.threads : hw;
    out.threads = unsigned(std::min<uint64_t>(t, spec.instances));
  }
  return std::move(out);
}

}  // namespace

}  // namespace ww::batch
