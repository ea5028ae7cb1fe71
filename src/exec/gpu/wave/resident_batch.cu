// Resident batches: one wave of instances that stays on the device from
// call to call (gpu_backend.h's ResidentBatch). It is planned like a batch
// whose single wave holds every instance, with the stack-segment and
// sparse pools taken whole at the start: an instance that runs out of them
// cannot run again from its beginning, as a batch's would, so it keeps
// the trap.
#include "exec/gpu/wave/wave_loop.cuh"

namespace ww::gpu {

namespace {

class ResidentWave final : public ResidentBatch {
 public:
  ResidentWave() = default;

  Status start(const BatchRequest& req) {
    const auto t_start = Clock::now();
    StepTrace trace("gpu resident", device_sync);
    req_ = req;
    req_.resident = true;
    req_.then.clear();
    req_.args.clear();
    req_.args_per_instance = false;
    req_.fill_args = nullptr;
    req_.arg_index_kind.clear();
    req_.mem_in.clear();
    req_.mem_out.clear();
    req_.dest = {};
    // Host functions only: a resident wave has no WASI world to serve.
    if (req_.host_calls && req_.host_calls->device_wasi())
      return make_error(kNoOffset, "resident instances on the GPU: WASI is not supported");
    // Any defined export will do until a call names its own.
    const Module& mod = req_.module->module;
    bool found = false;
    for (const Export& e : mod.exports)
      if (e.kind == ExternKind::Func && e.index >= mod.num_imported_funcs && !found) {
        req_.func_index = e.index;
        found = true;
      }
    if (!found) return make_error(kNoOffset, "resident instances: the module exports no function it defines");
    WW_TRY(prepare_batch(req_, prepared_, trace));
    if (prepared_.rq != &req_) req_ = prepared_.resolved;  // the loop refers to req_ from here on
    BatchPlan& plan = prepared_.plan;
    if (plan.wave_size < req_.instances)
      return make_error(kNoOffset, std::to_string(req_.instances) + " resident instances do not fit the GPU at once (" +
                                       prepared_.dev.name + "): at most " + std::to_string(plan.wave_size) +
                                       " with this module's memory (" + plan.to_string() + ")");
    // The pools whole from the start (see above).
    plan.pool_bytes = std::max(plan.pool_bytes, plan.pool_bytes_max);
    plan.first_wave = req_.instances;
    plan.waves = 1;
    loop_ = std::make_unique<WaveLoop>(req_, *prepared_.launcher, prepared_.store->impl(), prepared_.instance,
                                       prepared_.img, plan, t_start);
    RunResult unused;
    WW_TRY(loop_->setup(unused));
    WW_TRY(loop_->begin_resident(req_.instances));
    trace("start");
    return Status::Ok();
  }

  uint32_t instances() const override { return req_.instances; }
  const BatchPlan& plan() const override { return prepared_.plan; }
  const std::string& device_name() const override { return prepared_.dev.name; }

  Result<RunResult> call(const BatchRequest& c) override {
    const Module& mod = req_.module->module;
    if (c.module != req_.module) return make_error(kNoOffset, "resident instances: a call of another module");
    if (c.func_index < mod.num_imported_funcs || c.func_index >= mod.num_funcs())
      return make_error(kNoOffset, "GPU batch: the export is not a function defined by the module");
    const uint64_t nparams = mod.func_type(c.func_index).params.size();
    if (!c.fill_args && c.args.size() != (c.args_per_instance ? uint64_t(req_.instances) * nparams : nparams))
      return make_error(kNoOffset, "GPU batch: argument count does not match the function");
    BatchRequest& r = req_;
    r.func_index = c.func_index;
    r.args = c.args;
    r.args_hi = c.args_hi;
    r.args_per_instance = c.args_per_instance;
    r.fill_args = c.fill_args;
    r.arg_index_kind = c.arg_index_kind;
    r.then = c.then;
    r.launch_per_call = c.launch_per_call;
    WW_TRY(check_then(r));
    r.fuel = c.fuel;
    r.timeout_s = c.timeout_s;
    r.cancel = c.cancel;
    r.mem_in = c.mem_in;
    r.mem_out = c.mem_out;
    r.device_args = c.device_args;
    r.device_results = c.device_results;
    r.progress = c.progress;
    const auto t0 = Clock::now();
    const double kernel_before = loop_->kernel_ms();
    RunResult out;
    const Status s = loop_->resident_call(out);
    // Nothing of this call's inputs stays referenced.
    r.fill_args = nullptr;
    r.device_args.clear();
    r.device_results.clear();
    r.mem_in.clear();
    r.mem_out.clear();
    r.progress = nullptr;
    r.cancel = nullptr;
    WW_TRY(s);
    out.plan = prepared_.plan;
    out.device_name = prepared_.dev.name;
    out.tier = prepared_.launcher->tier_name();
    out.kernel_ms = loop_->kernel_ms() - kernel_before;
    out.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return out;
  }

  Status read_memory(uint64_t addr, uint64_t len, uint8_t* out) override { return loop_->read_memory(addr, len, out); }
  Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data) override {
    return loop_->write_memory(addr, record, data);
  }

 private:
  // Declared before the loop, which refers to both.
  BatchRequest req_;
  PreparedBatch prepared_;
  std::unique_ptr<WaveLoop> loop_;
};

}  // namespace

Result<std::unique_ptr<ResidentBatch>> make_resident(const BatchRequest& req) {
  auto r = std::make_unique<ResidentWave>();
  WW_TRY(r->start(req));
  return std::unique_ptr<ResidentBatch>(std::move(r));
}

}  // namespace ww::gpu
