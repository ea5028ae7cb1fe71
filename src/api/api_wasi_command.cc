// A WASI command on the process's own stdio (WasiOptions::process_stdio):
// one instance on the CPU whose _start runs with the given argv,
// environment and preopens, as `wasmtime run` runs it. Its exit code is
// the result.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "api/internal.h"
#include "batch/background_compiles.h"
#include "compiled/compiled_tier.h"
#include "compiled/host_compiler.h"
#include "compiled/tier_up.h"
#include "runtime/unknown_imports.h"
#include "store/store.h"
#include "wasi/wasi.h"

namespace wasmwarp::api {
namespace {

// Sets `stop` to Timeout at the deadline (seconds; 0 = none) or to
// Interrupted when `cancel` is raised, until finish().
class Watchdog {
 public:
  Watchdog(double seconds, const std::atomic<bool>* cancel, std::atomic<uint8_t>& stop)
      : thread_([this, seconds, cancel, &stop] {
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
          std::unique_lock<std::mutex> lk(mu_);
          while (!done_) {
            // Up to 50 ms between looks at the cancel flag.
            cv_.wait_for(lk, std::chrono::milliseconds(50));
            if (cancel && cancel->load()) stop.store(uint8_t(ww::TrapCode::Interrupted));
            if (seconds > 0 && std::chrono::steady_clock::now() >= deadline) stop.store(uint8_t(ww::TrapCode::Timeout));
          }
        }) {}
  ~Watchdog() { finish(); }
  void finish() {
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

Expected<ww::wasi::Config> config_of(const WasiOptions& w) {
  ww::wasi::Config config;
  config.args.push_back(w.program);
  config.args.insert(config.args.end(), w.args.begin(), w.args.end());
  for (const std::string& e : w.env) {
    if (e.find('=') == std::string::npos || e[0] == '=') return Error{"environment '" + e + "': expected NAME=VALUE"};
    config.env.push_back(e);
  }
  for (const WasiOptions::Dir& d : w.dirs)
    config.preopens.push_back({d.host, d.guest.empty() ? d.host : d.guest, d.writable});
  return config;
}

// The compiled CPU code of the module, when the tier allows it and the
// compiler delivers; an error only for Tier::Compiled. The auto tier
// takes the whole module's code from the cache, else tiers up (`tiering`).
Expected<std::shared_ptr<const ww::NativeCode>> native_code(const Module& m, const EngineOptions& e,
                                                            const CallOptions& o,
                                                            std::shared_ptr<ww::compiled::TieredCode>* tiering) {
  if (e.tier == Tier::Interpreter) return std::shared_ptr<const ww::NativeCode>();
  ww::compiled::Request req;
  req.module = m.impl().cm;
  req.target = ww::compiled::Target::Cpu;
  // The request a batch of this program makes (batch.cc's
  // compile_request), so that both find the same code in the cache.
  for (const ww::Export& x : m.impl().cm->module.exports)
    if (x.kind == ww::ExternKind::Func && x.name == "_start") req.entries = {x.index};
  req.metered = o.fuel != 0;
  req.deadline = true;  // the interrupt byte: the timeout and cancel
  req.cache.enabled = e.cache;
  req.cache.dir = e.cache_dir;
  if (e.tier == Tier::Auto && !ww::compiled::cached_by_index(req)) {
    auto code = ww::batch::start_kept_tier_up(req);
    if (!code.ok()) return std::shared_ptr<const ww::NativeCode>();  // no compiler: the interpreter
    *tiering = *code;
    return ww::compiled::as_native(*code);
  }
  // Ctrl-C ends the compile (as it ends a batch's).
  ww::compiled::StopCompilersOnCancel stop(o.cancel);
  auto native = ww::compiled::compile_cpu(req, nullptr);
  if (native.ok() && *native) return std::shared_ptr<const ww::NativeCode>(*native);
  if (e.tier == Tier::Compiled)
    return Error{"compiled tier: " + (native.ok() ? std::string("no code") : native.error().message)};
  return std::shared_ptr<const ww::NativeCode>();
}

// One instance's outcome as a call's result; `where` says where it
// trapped.
CallResult one_result(const Module& m, uint8_t trap, int32_t exit_code, bool finished, const ww::TrapInfo& where,
                      const ww::compiled::TieredCode* tiering) {
  auto impl = std::make_shared<CallResult::Impl>();
  impl->module = m.impl().cm;
  ww::batch::BatchResult& r = impl->r;
  r.type.results = {ww::ValType::I32};
  r.result_names = {"exit_code"};
  r.results32.assign(1, trap ? 0 : uint32_t(exit_code));
  r.traps.assign(1, trap);
  r.finished.assign(1, finished ? 1 : 0);
  r.trap_func.assign(1, trap ? where.func_index : 0);
  r.trap_pc.assign(1, trap && where.code != ww::TrapCode::None ? where.pc : ww::kNoTrapPc);
  r.backend = ww::batch::Backend::Cpu;
  r.threads = 1;
  if (tiering) r.compile.tier_up = ww::batch::tier_up_report(*tiering);
  impl->types = {ValueType::I32};
  impl->report = report_of(r);
  return CallResult(std::move(impl));
}

}  // namespace

Expected<CallResult> run_on_process_stdio(const Module& m, const WasiOptions& w, const EngineOptions& e,
                                          const CallOptions& o) {
  if (e.backend == Backend::Gpu) return Error{"a WASI program on the process's stdio runs on the CPU backend for now"};
  const ww::Module& mod = m.impl().cm->module;
  auto config = config_of(w);
  if (!config) return config.error();
  ww::wasi::Context wasi(std::move(*config));
  if (ww::Status s = wasi.open_preopens(); !s.ok()) return Error{s.error().message};

  // The timeout and cancel become the interrupt byte running code reads.
  std::atomic<uint8_t> stop{0};
  ww::StoreLimits limits;
  limits.fuel = o.fuel;
  limits.interrupt = &stop;
  Watchdog watchdog(o.timeout_s, o.cancel, stop);
  ww::Store store(limits);
  std::shared_ptr<ww::compiled::TieredCode> tiering;
  auto native = native_code(m, e, o, &tiering);
  if (!native) return native.error();
  if (*native)
    store.impl().native_for = [code = *native](const std::shared_ptr<const ww::CompiledModule>&) { return code; };
  std::vector<std::optional<ww::ExternVal>> resolved;
  if (ww::Status s = wasi.link(store, mod, resolved); !s.ok()) return Error{s.error().message};
  if (ww::Status s = ww::stand_in_unknown_imports(store, mod, internal_unknown_imports(e.unknown_imports), resolved);
      !s.ok())
    return Error{s.error().message};
  std::vector<ww::ExternVal> imports;
  for (const std::optional<ww::ExternVal>& v : resolved) imports.push_back(*v);
  auto inst = store.instantiate(m.impl().cm, imports);
  if (auto* err = std::get_if<ww::InstantiateError>(&inst)) return Error{w.program + ": " + err->message};
  wasi.bind(std::get<uint32_t>(inst));
  auto start = store.get_export(std::get<uint32_t>(inst), "_start");
  if (!start || start->kind != ww::ExternKind::Func) return Error{w.program + ": a WASI command exports _start"};
  ww::InvokeResult r = store.invoke(start->addr, {});
  watchdog.finish();
  std::fflush(stdout);
  if (r.trap == ww::TrapCode::Exit && wasi.exit_code())
    return one_result(m, 0, int32_t(*wasi.exit_code()), true, store.last_trap(), tiering.get());
  const bool unfinished = r.trap == ww::TrapCode::Timeout || r.trap == ww::TrapCode::Interrupted;
  return one_result(m, uint8_t(r.trap), 0, !unfinished, store.last_trap(), tiering.get());
}

}  // namespace wasmwarp::api
