// The GPU executor: a range of the batch as one gpu::BatchRequest (the
// wave loop plans its own waves), run by the interpreter kernel or by
// compiled code.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <thread>

#include "batch/executor.h"
#include "batch/host_imports.h"
#include "batch/resident.h"
#include "common/byte_reader.h"
#include "common/step_trace.h"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "exec/gpu/executor/device_shares.h"
#include "exec/gpu/executor/gpu_executor.h"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/host_calls/gpu_wasi.h"

namespace ww::batch {

Status make_scratch_instance(const Job& job, ScratchInstance& s) {
  const BatchSpec& spec = *job.spec;
  s.ctx = intrinsics::GpuContext{spec.intrinsics ? spec.intrinsics : &s.fallback, 0};
  WW_ASSIGN_OR_RETURN(std::vector<ExternVal> imports, link_imports(s.store, spec.module->module, &s.ctx, nullptr,
                                                                   &spec.host_functions, spec.unknown_imports));
  auto r = job.image ? s.store.instantiate(spec.module, imports, job.image->snapshot)
                     : s.store.instantiate(spec.module, imports);
  if (auto* e = std::get_if<InstantiateError>(&r)) return make_error(kNoOffset, "instantiation failed: " + e->message);
  s.instance = std::get<uint32_t>(r);
  return Status::Ok();
}

namespace {

// An export whose body is one `i32.const` returns it whatever the
// instance's state, as the address exports of hash-wasm (Hash_GetBuffer)
// and the bench guests (input_ptr) do. A fresh instance made to ask it
// would be a visible share of a small batch (bench/gpu/trace.sh's sha256
// row).
std::optional<uint32_t> constant_result(const Module& m, const std::string& export_name) {
  for (const Export& e : m.exports) {
    if (e.name != export_name || e.kind != ExternKind::Func || e.index < m.num_imported_funcs) continue;
    const FunctionBody& body = m.codes[e.index - m.num_imported_funcs];
    const FuncType& type = m.func_type(e.index);
    if (!type.params.empty() || type.results.size() != 1 || type.results[0] != ValType::I32) return std::nullopt;
    ByteReader r(m.bytes.data() + body.body_offset, body.body_end - body.body_offset);
    Result<uint8_t> op = r.u8();
    if (!op.ok() || *op != 0x41) return std::nullopt;  // i32.const
    Result<int32_t> value = r.s32();
    Result<uint8_t> end = value.ok() ? r.u8() : Result<uint8_t>(uint8_t(0));
    if (!value.ok() || !end.ok() || *end != 0x0b || !r.at_end()) return std::nullopt;
    return uint32_t(*value);
  }
  return std::nullopt;
}

}  // namespace

Result<uint64_t> resolve_address_fresh(const Job& job, const Address& a) {
  if (a.export_name.empty()) return a.addr;
  if (!a.is_global)
    if (std::optional<uint32_t> c = constant_result(job.spec->module->module, a.export_name)) return uint64_t(*c);
  ScratchInstance scratch;
  WW_TRY(make_scratch_instance(job, scratch));
  Store& store = scratch.store;
  auto ev = store.get_export(scratch.instance, a.export_name);
  if (!ev) return make_error(kNoOffset, "no export " + a.export_name);
  if (a.is_global) return uint64_t(uint32_t(store.global_get(ev->addr).bits));
  InvokeResult res = store.invoke(ev->addr, {});
  if (!res.ok())
    return make_error(kNoOffset, "address export " + a.export_name + " trapped: " + trap_message(res.trap));
  return uint64_t(uint32_t(res.results[0].bits));
}

namespace {

// Arguments that are constants or @index as one row of values and, per
// parameter, the index kind the device turns the index into (0: the value).
// True when some import of `m` is one of `host`'s.
bool uses_host_functions(const Module& m, const HostFunctions& host) {
  for (const Import& imp : m.imports)
    if (host_function_for(imp, &host)) return true;
  return false;
}

// Per function import, the device's stand-in for one nothing provides
// (gpu::BatchRequest::unknown_imports): the batch's WASI context, when it
// has one, provides WASI's imports as the CPU's does.
std::vector<uint8_t> device_stand_ins(const BatchSpec& spec) {
  if (spec.unknown_imports == UnknownImports::Error) return {};
  const uint8_t id = spec.unknown_imports == UnknownImports::Trap ? gpu::kDevTrapImport : gpu::kDevZeroImport;
  std::vector<uint8_t> ids;
  for (bool unknown : unknown_function_imports(spec.module->module, spec.wasi || spec.files, &spec.host_functions))
    ids.push_back(unknown ? id : 0);
  return ids;
}

// The embedder's host functions for instances on the GPU: each call comes
// from an instance waiting at it in its wave (gpu::HostCallServer), with
// its batch index. It keeps its own copy of them: resident instances call
// them long after the batch that made it.
class HostFunctionCalls final : public gpu::HostCallServer {
 public:
  HostFunctionCalls(const Module& m, HostFunctions host) : host_(std::move(host)) {
    for (const Import& imp : m.imports)
      if (imp.kind == ExternKind::Func) by_func_.push_back(host_function_for(imp, &host_));
  }
  void serve(gpu::HostCall& c) override {
    const HostFunction* h = c.foreign_func < 0 && c.func < by_func_.size() ? by_func_[c.func] : nullptr;
    c.trap = h ? h->fn(c.instance, c.io) : TrapCode::HostError;
  }

 private:
  const HostFunctions host_;
  std::vector<const HostFunction*> by_func_;  // per imported function, into host_
};

// The arguments' high words: 0 but for v128 constants (the only v128
// arguments, make_job), whatever the other arguments' kinds.
std::vector<uint64_t> high_words(const std::vector<ArgSource>& args) {
  std::vector<uint64_t> hi;
  for (const ArgSource& a : args) hi.push_back(a.value.hi);
  return hi;
}

void uniform_args(const std::vector<ArgSource>& args, const std::vector<ValType>& params, std::vector<uint64_t>& values,
                  std::vector<uint8_t>& index_kind) {
  for (size_t k = 0; k < params.size(); ++k) {
    const bool index = args[k].kind == ArgSource::Index;
    values.push_back(index ? 0 : args[k].value.bits);
    index_kind.push_back(!index                      ? 0
                         : params[k] == ValType::I32 ? 1
                         : params[k] == ValType::I64 ? 2
                         : params[k] == ValType::F32 ? 3
                                                     : 4);
  }
}

// Several GPUs' figures (and each one's part, shares[d] for figs[d]) as
// the batch's: counts add up; times, which passed side by side, are the
// GPUs' average (so the phases still split the wall time); sizes are the
// largest. Each GPU's part is listed too, added to what earlier segments
// of the batch ran there.
void merge_device_figures(const std::vector<BatchResult>& figs, const std::vector<GpuShare>& shares, BatchResult& out) {
  const double k = double(figs.size());
  PhaseTimes& ph = out.phases;
  std::string names;
  for (const BatchResult& f : figs) {
    out.host_calls += f.host_calls;
    out.host_passes += f.host_passes;
    out.device_output_bytes += f.device_output_bytes;
    out.device_files += f.device_files;
    out.device_file_bytes += f.device_file_bytes;
    out.pool_reruns += f.pool_reruns;
    out.replans += f.replans;
    out.stack_reruns += f.stack_reruns;
    out.grow_reruns += f.grow_reruns;
    out.waves += f.waves;
    out.kernel_ms += f.kernel_ms / k;
    ph.host_calls += f.phases.host_calls / k;
    ph.plan += f.phases.plan / k;
    ph.upload += f.phases.upload / k;
    ph.memory_setup += f.phases.memory_setup / k;
    ph.kernel += f.phases.kernel / k;
    ph.download += f.phases.download / k;
    out.linear_bytes_per_instance = std::max(out.linear_bytes_per_instance, f.linear_bytes_per_instance);
    out.device_bytes_per_instance = std::max(out.device_bytes_per_instance, f.device_bytes_per_instance);
    out.reserved_bytes_per_instance = std::max(out.reserved_bytes_per_instance, f.reserved_bytes_per_instance);
    out.stack_pool_bytes = std::max(out.stack_pool_bytes, f.stack_pool_bytes);
    out.wave_size = std::max(out.wave_size, f.wave_size);
    if (f.memory_layout != MemoryLayout::Auto) out.memory_layout = f.memory_layout;
    // The d-th GPU of the batch is out.gpus[d] (one GPU listed twice is
    // two entries): a batch's segments all run on the same list.
    const GpuShare& g = shares[size_t(&f - figs.data())];
    if (out.gpus.size() < figs.size()) {
      out.gpus.push_back(g);
    } else {
      GpuShare& o = out.gpus[size_t(&f - figs.data())];
      o.instances += g.instances;
      o.seconds += g.seconds;
      o.kernel_ms += g.kernel_ms;
    }
    if (names.find(f.device) == std::string::npos) names += (names.empty() ? "" : " + ") + f.device;
  }
  out.device = std::to_string(figs.size()) + " GPUs: " + names;
}

// Resident instances on the GPU: one wave kept on the device, and what
// serves its host-function calls for as long as they live.
struct GpuResident final : ResidentState {
  // Declared before `wave`, which refers to it: destroyed after it.
  std::unique_ptr<HostFunctionCalls> host_calls;
  std::unique_ptr<gpu::ResidentBatch> wave;
  Status read_memory(uint64_t addr, uint64_t len, uint8_t* out) override { return wave->read_memory(addr, len, out); }
  Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data) override {
    return wave->write_memory(addr, record, data);
  }
};

class GpuExecutor final : public Executor {
 public:
  explicit GpuExecutor(std::shared_ptr<gpu::KernelLauncher> launcher) : launcher_(std::move(launcher)) {}

  Backend backend() const override { return Backend::Gpu; }
  Tier tier() const override { return launcher_ ? Tier::Compiled : Tier::Interp; }
  std::string where() const override { return device_; }

  Status start_resident(const Job& job, Resident& r) override {
    const BatchSpec& spec = *job.spec;
    if (spec.instances > 0xffffffffu) return make_error(kNoOffset, "the GPU keeps at most 2^32-1 resident instances");
    gpu::BatchRequest req = base_request(job, 0, r.instances(), launcher_);
    req.total_instances = uint32_t(r.instances());
    auto state = std::make_unique<GpuResident>();
    if (uses_host_functions(spec.module->module, spec.host_functions)) {
      state->host_calls = std::make_unique<HostFunctionCalls>(spec.module->module, spec.host_functions);
      req.host_calls = state->host_calls.get();
    }
    WW_ASSIGN_OR_RETURN(state->wave, gpu::make_resident(req));
    device_ = state->wave->device_name();
    r.state() = std::move(state);
    return Status::Ok();
  }

  Status run(const Job& job, uint64_t first, uint64_t count, BatchResult& out,
             const std::function<void(uint64_t)>& progress, const std::function<void(uint64_t)>& ready) override {
    const BatchSpec& spec = *job.spec;
    const Module& m = spec.module->module;
    if (job.func_index < m.num_imported_funcs)
      return make_error(kNoOffset, "export '" + spec.export_name +
                                       "' is an imported function; the GPU runs functions the module defines");
    for (size_t c = 0; c < job.then.size(); ++c)
      if (job.then[c].func_index < m.num_imported_funcs)
        return make_error(kNoOffset, "export '" + spec.then[c].export_name +
                                         "' is an imported function; the GPU runs functions the module defines");
    if (spec.total() > 0xffffffffu)
      return make_error(kNoOffset, "the GPU backend runs at most 2^32-1 instances per batch");
    if (job.gpus.size() > 1) return run_on_devices(job, first, count, out, progress, ready);
    const Job::Gpu gpu = job.gpus.empty() ? Job::Gpu{gpu::current_device(), 0} : job.gpus[0];
    gpu::DeviceScope on(gpu.device);
    WW_TRY(on.status());
    Stretch s{first, count, nullptr, gpu.memory_budget};
    auto rows_final = [&](uint32_t, uint32_t end) {
      if (ready) ready(end);
    };
    return run_stretch(job, s, out, out, progress, ready ? rows_final : RowsFinal());
  }

 private:
  using RowsFinal = std::function<void(uint32_t first, uint32_t end)>;
  // A range of the batch for one GPU: all of it, or the waves `claims`
  // hands this device (number `device` of the batch's GPUs).
  struct Stretch {
    uint64_t first = 0, count = 0;
    StretchClaims* claims = nullptr;
    uint64_t memory_budget = 0;
    unsigned device = 0;
    const GpuWasiCalls* wasi_probed = nullptr;  // see GpuWasiCalls::open
  };

  // The range on every GPU of job.gpus at once, each on a thread of its
  // own taking waves from the same claims; its figures are merged after.
  Status run_on_devices(const Job& job, uint64_t first, uint64_t count, BatchResult& out,
                        const std::function<void(uint64_t)>& progress, const std::function<void(uint64_t)>& ready) {
    const size_t k = job.gpus.size();
    // A claim smaller than what a GPU runs at once leaves it part idle
    // (montecarlo on the interpreter runs far slower in waves of half a
    // GPU).
    uint64_t min_claim = StretchClaims::kMinClaim;
    for (const Job::Gpu& g : job.gpus) min_claim = std::max(min_claim, g.resident_threads);
    StretchClaims claims(count, unsigned(k), uint32_t(std::min<uint64_t>(min_claim, 1u << 30)));
    std::mutex mu;  // the frontier, progress and `ready` calls
    ReadyFrontier frontier;
    std::vector<uint64_t> done(k, 0);
    std::vector<BatchResult> figures(k);
    std::vector<Status> status(k);
    std::vector<double> seconds(k, 0);
    // A WASI batch's stdio is opened once, here, before any GPU runs an
    // instance.
    std::unique_ptr<GpuWasiCalls> probe;
    if (const WasiBatch* w = job.spec->wasi ? job.spec->wasi.get() : job.spec->files.get()) {
      probe = std::make_unique<GpuWasiCalls>(*w, job.spec->module->module, out, first, count, job.spec->index_base);
      WW_TRY(probe->open());
    }
    std::vector<std::thread> threads;
    for (size_t d = 0; d < k; ++d)
      threads.emplace_back([&, d] {
        const auto t0 = std::chrono::steady_clock::now();
        gpu::DeviceScope on(job.gpus[d].device);
        status[d] = on.status();
        if (status[d].ok()) {
          Stretch s{first, count, &claims, job.gpus[d].memory_budget, unsigned(d), probe.get()};
          auto device_progress = [&](uint64_t n) {
            std::lock_guard<std::mutex> g(mu);
            done[d] = n;
            uint64_t all = 0;
            for (uint64_t x : done) all += x;
            if (progress) progress(std::min(all, count));
          };
          auto rows_final = [&](uint32_t a, uint32_t b) {
            std::lock_guard<std::mutex> g(mu);
            const uint64_t before = frontier.value();
            const uint64_t now = frontier.add(a, b);
            if (now > before && ready) ready(now);
          };
          status[d] = run_stretch(job, s, out, figures[d], device_progress, rows_final);
        }
        // A failed GPU's unclaimed instances are not run by the others:
        // the batch reports that GPU's error.
        if (!status[d].ok()) claims.stop();
        seconds[d] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      });
    for (std::thread& t : threads) t.join();
    for (size_t d = 0; d < k; ++d)
      if (!status[d].ok())
        return make_error(kNoOffset, "GPU " + std::to_string(job.gpus[d].device) + ": " + status[d].error().message);
    std::vector<GpuShare> shares;
    for (size_t d = 0; d < k; ++d)
      shares.push_back(
          {job.gpus[d].device, figures[d].device, claims.taken(unsigned(d)), seconds[d], figures[d].kernel_ms});
    merge_device_figures(figures, shares, out);
    device_ = out.device;
    return Status::Ok();
  }

  // A stretch's request and what it refers to; its callbacks reach the
  // caller's through `progress` and `rows_final`.
  struct StretchRequest {
    gpu::BatchRequest req;
    std::function<void(uint64_t)> progress;
    RowsFinal rows_final;
    std::unique_ptr<HostFunctionCalls> host_fns;
    std::unique_ptr<GpuWasiCalls> wasi;
  };
  Status run_stretch(const Job& job, const Stretch& st, BatchResult& out, BatchResult& fig,
                     const std::function<void(uint64_t)>& progress, const RowsFinal& rows_final) {
    StretchRequest sr;
    sr.progress = progress;
    sr.rows_final = rows_final;
    WW_TRY(build_request(job, st, out, bool(rows_final), sr));
    return run_request(job, sr, out, fig);
  }

  // `final_rows`: whether the request says when rows are final.
  Status build_request(const Job& job, const Stretch& st, BatchResult& out, bool final_rows, StretchRequest& sr) {
    const BatchSpec& spec = *job.spec;
    StepTrace trace("gpu executor");
    const uint64_t first = st.first, count = st.count;
    gpu::BatchRequest& req = sr.req;
    req = base_request(job, first, count, launcher_);
    trace("base request");
    req.memory_budget = st.memory_budget;
    if (StretchClaims* claims = st.claims)
      req.claim = [claims, d = st.device](uint32_t want, uint32_t* at) {
        uint64_t a = 0;
        const uint32_t n = claims->claim(d, want, &a);
        *at = uint32_t(a);
        return n;
      };

    const auto& params = job.type.params;
    // Constants and @index are made on the device; only columns travel.
    bool uniform = true;
    for (const ArgSource& a : spec.args) uniform &= a.kind != ArgSource::Column && a.kind != ArgSource::DeviceColumn;
    // Columns in GPU memory are read there (their rows for this stretch),
    // once whatever wrote them has finished.
    bool on_device = !spec.device_results.empty();
    for (size_t k = 0; k < spec.args.size(); ++k)
      if (spec.args[k].kind == ArgSource::DeviceColumn) {
        req.device_args.resize(params.size());
        const uint32_t w = column_width(params[k]);
        req.device_args[k] = {static_cast<const uint8_t*>(spec.args[k].device) + first * w, w};
        on_device = true;
      }
    for (size_t k = 0; k < spec.device_results.size(); ++k) {
      const uint32_t w = column_width(job.type.results[k]);
      req.device_results.push_back({static_cast<uint8_t*>(spec.device_results[k]) + first * w, w});
    }
    if (on_device) WW_TRY(gpu::device_synchronize());
    req.args_hi = high_words(spec.args);
    if (uniform) {
      uniform_args(spec.args, params, req.args, req.arg_index_kind);
    } else {
      req.fill_args = [&spec, &params, first](uint32_t wave_first, uint32_t n, uint64_t* io) {
        for (size_t k = 0; k < params.size(); ++k)
          for (uint32_t t = 0; t < n; ++t)
            io[k * n + t] =
                arg_value(spec.args[k], params[k], first + wave_first + t, spec.index_base + first + wave_first + t)
                    .bits;
      };
    }

    for (size_t c = 0; c < job.then.size(); ++c) {
      gpu::BatchRequest::ThenCall& call = req.then.emplace_back();
      call.func_index = job.then[c].func_index;
      if (spec.then[c].repeat > 0xffffffffu)
        return make_error(kNoOffset, "--then: a call repeated more than 2^32-1 times");
      call.repeat = uint32_t(spec.then[c].repeat);
      uniform_args(spec.then[c].args, job.then[c].type.params, call.args, call.arg_index_kind);
      call.args_hi = high_words(spec.then[c].args);
    }
    req.launch_per_call = spec.gpu.launch_per_call;
    req.fuel = spec.fuel;
    if (spec.timeout_s > 0) {
      // The whole batch's deadline, whatever ran before this range.
      req.timeout_s = job.seconds_left();
      if (req.timeout_s <= 0) return Status::Ok();  // every instance stays unfinished
    }
    req.cancel = spec.cancel;

    // Every instance starts from the same state, so an address export gives
    // one answer for all of them; it is asked once, on a fresh instance.
    for (const MemInput& mi : spec.mem_in) {
      WW_ASSIGN_OR_RETURN(uint64_t addr, resolve_address_fresh(job, mi.addr));
      if (addr > 0xffffffffu) return make_error(kNoOffset, "--mem-in address out of range");
      req.mem_in.push_back({uint32_t(addr), uint32_t(mi.record), mi.bytes.data() + first * mi.record});
    }
    for (size_t k = 0; k < spec.mem_out.size(); ++k) {
      const MemOutput& mo = spec.mem_out[k];
      WW_ASSIGN_OR_RETURN(uint64_t addr, resolve_address_fresh(job, mo.addr));
      if (addr > 0xffffffffu || mo.length > 0xffffffffu) return make_error(kNoOffset, "--mem-out range out of bounds");
      req.mem_out.push_back({uint32_t(addr), uint32_t(mo.length), out.mem_out[k].data() + first * mo.length});
    }
    trace("memory inputs' and outputs' addresses");
    req.progress = [&sr](uint64_t done, uint64_t, double) {
      if (sr.progress) sr.progress(done);
    };
    // A WASI command's exit codes and output are the host's, settled when
    // the stretch ends.
    if (final_rows && !spec.wasi)
      req.final_rows = [&sr](uint32_t a, uint32_t b) {
        if (sr.rows_final) sr.rows_final(a, b);
      };
    if (spec.note && !plan_shown_.exchange(true)) {
      req.on_plan = [&spec](const gpu::BatchPlan& plan, const std::string& device) {
        spec.note("gpu plan (" + device + "): " + plan.to_string());
      };
    }

    // The embedder's host functions, and WASI calls and the gpu file
    // intrinsics, are served on the host.
    const Module& m = spec.module->module;
    if (uses_host_functions(m, spec.host_functions)) {
      if (spec.wasi || spec.files)
        return make_error(kNoOffset, "host functions together with WASI on the GPU are not supported yet");
      sr.host_fns = std::make_unique<HostFunctionCalls>(m, spec.host_functions);
      req.host_calls = sr.host_fns.get();
    }
    if (const WasiBatch* w = spec.wasi ? spec.wasi.get() : spec.files.get()) {
      sr.wasi = std::make_unique<GpuWasiCalls>(*w, spec.module->module, out, first, count, spec.index_base);
      WW_TRY(sr.wasi->open(st.wasi_probed));
      req.host_calls = sr.wasi.get();
      if (uint32_t cap = sr.wasi->max_wave()) req.max_wave = req.max_wave ? std::min(req.max_wave, cap) : cap;
    }

    // A WASI command's result column (its exit code) is the host's: the
    // export itself returns nothing.
    const size_t nr = spec.wasi ? 0 : job.type.results.size();
    // size_result zeroed the columns, and no other executor runs this range.
    req.dest = {out.results.empty() ? nullptr : out.results.data() + first * nr,
                out.traps.data() + first,
                out.trap_func.data() + first,
                out.trap_pc.data() + first,
                out.finished.data() + first,
                true};
    if (!out.results32.empty()) req.dest.results32 = out.results32.data() + first * nr;
    if (!out.results_hi.empty()) req.dest.results_hi = out.results_hi.data() + first * nr;
    return Status::Ok();
  }

  Status run_request(const Job& job, StretchRequest& sr, BatchResult& out, BatchResult& fig) {
    const BatchSpec& spec = *job.spec;
    const gpu::BatchRequest& req = sr.req;
    StepTrace trace("gpu executor");
    gpu::RunResult r;
    if (spec.resident) {
      // The resident wave answers in vectors of its own: into the batch's.
      WW_ASSIGN_OR_RETURN(r, static_cast<GpuResident&>(*spec.resident->state()).wave->call(req));
      if (req.dest.results32) std::copy(r.results.begin(), r.results.end(), req.dest.results32);  // narrowed
      else std::copy(r.results.begin(), r.results.end(), req.dest.results);
      if (req.dest.results_hi) std::copy(r.results_hi.begin(), r.results_hi.end(), req.dest.results_hi);
      std::copy(r.traps.begin(), r.traps.end(), req.dest.traps);
      std::copy(r.trap_func.begin(), r.trap_func.end(), req.dest.trap_func);
      std::copy(r.trap_pc.begin(), r.trap_pc.end(), req.dest.trap_pc);
      std::copy(r.finished.begin(), r.finished.end(), req.dest.finished);
    } else {
      trace("request");
      WW_ASSIGN_OR_RETURN(r, gpu::run_batch(req));
    }
    trace("run the batch");
    PhaseTimes& ph = fig.phases;
    if (GpuWasiCalls* wasi = sr.wasi.get()) {
      // Its counters are the whole batch's.
      std::lock_guard<std::mutex> g(finish_mu_);
      wasi->finish();
      if (const uint64_t n = wasi->out_of_descriptors(); n && spec.note)
        spec.note("gpu: the host ran out of file descriptors for " + std::to_string(n) +
                  " instance(s), which end in \"host function failed\"; a smaller --gpu-max-wave holds fewer files "
                  "open at once");
    }
    fig.host_calls += r.host_calls;
    fig.host_passes += r.host_passes;
    fig.device_output_bytes += r.device_output_bytes;
    fig.device_files += r.device_files;
    fig.device_file_bytes += r.device_file_bytes;
    ph.host_calls += r.host_ms;
    fig.kernel_ms += r.kernel_ms;
    ph.plan += r.plan_ms;
    ph.upload += r.upload_ms;
    ph.memory_setup += r.memory_setup_ms;
    ph.kernel += r.kernel_ms;
    ph.download += r.download_ms;
    // Sparse memory: what the instances took from the pool, measured on
    // the fullest wave; dense: the capacity, all of it allocated.
    fig.linear_bytes_per_instance = r.plan.layout != MemoryLayout::Sparse ? r.plan.linear_bytes_per_instance
                                    : r.pool_wave_instances               ? r.pool_bytes_used / r.pool_wave_instances
                                                                          : 0;
    fig.device_bytes_per_instance = fig.linear_bytes_per_instance + r.plan.overhead_bytes_per_instance;
    fig.reserved_bytes_per_instance = uint64_t(r.plan.memory_pages) * kPageSize;
    fig.pool_reruns += r.pool_reruns;
    fig.replans += r.replans;
    fig.stack_reruns += r.stack_reruns;
    fig.grow_reruns += r.grow_reruns;
    fig.stack_pool_bytes = std::max(fig.stack_pool_bytes, r.stack_pool_bytes);
    fig.wave_size = std::max(fig.wave_size, r.plan.wave_size);
    fig.waves += r.plan.waves;
    fig.memory_layout = r.plan.layout;
    fig.device = r.device_name;
    if (&fig == &out) device_ = r.device_name;
    return Status::Ok();
  }

  // What every request of the batch shares: the module, its instances,
  // stacks, memory and initial state, and what runs them.
  static gpu::BatchRequest base_request(const Job& job, uint64_t first, uint64_t count,
                                        const std::shared_ptr<gpu::KernelLauncher>& launcher) {
    const BatchSpec& spec = *job.spec;
    gpu::BatchRequest req;
    req.module = spec.module;
    req.func_index = job.func_index;
    req.instances = uint32_t(count);
    req.index_base = uint32_t(spec.index_base + first);
    req.total_instances = uint32_t(spec.total());
    req.launcher = launcher;
    // Small stacks for every instance; past them, stack segments
    // (gpu::BatchRequest::*_limit), up to the CPU backend's limits.
    req.stack_slots = std::min(spec.gpu.stack_slots, spec.gpu.stack_slots_limit);
    req.max_call_depth = std::min(spec.gpu.call_depth, spec.gpu.call_depth_limit);
    req.stack_slots_limit = spec.gpu.stack_slots_limit;
    req.call_depth_limit = spec.gpu.call_depth_limit;
    req.memory_pages = spec.gpu.memory_pages;
    req.max_wave = spec.gpu.max_wave;
    req.tuning = spec.gpu.tuning;
    req.layout = job.gpu_layout;
    req.batch = spec.intrinsics;
    req.unknown_imports = device_stand_ins(spec);
    if (job.image) {
      // Every instance starts from the --init state; the GPU copies it
      // from the live instance that made it.
      req.source_store = job.image->store.get();
      req.source_instance = job.image->instance;
    } else if (job.gpu_source) {
      req.source_store = job.gpu_source->store.get();
      req.source_instance = job.gpu_source->instance;
      req.source_fresh = true;
    }
    return req;
  }

  std::shared_ptr<gpu::KernelLauncher> launcher_;
  std::string device_;
  std::atomic<bool> plan_shown_{false};
  std::mutex finish_mu_;
};

}  // namespace

std::unique_ptr<Executor> make_gpu_interpreter() { return std::make_unique<GpuExecutor>(nullptr); }

Result<std::unique_ptr<Executor>> compile_gpu_executor(const compiled::Request& req, compiled::Outcome* outcome,
                                                       int device) {
  std::optional<gpu::DeviceScope> on;
  if (device >= 0) on.emplace(device);
  WW_ASSIGN_OR_RETURN(std::shared_ptr<gpu::KernelLauncher> launcher, compiled::compile_gpu(req, outcome));
  return std::unique_ptr<Executor>(std::make_unique<GpuExecutor>(std::move(launcher)));
}

std::shared_ptr<void> pin_for_gpu_at_start_up(const void* p, uint64_t bytes) {
  auto pin = std::make_shared<gpu::HostPin>(gpu::HostPin::AtStartUp{}, p, bytes);
  if (pin->empty()) return nullptr;
  return pin;
}

void release_on_gpu(std::shared_ptr<void> object) { gpu::retire_in_background(std::move(object)); }

}  // namespace ww::batch
