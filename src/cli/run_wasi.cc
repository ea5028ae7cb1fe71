#include "cli/run_wasi.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "cli/common.h"
#include "cli/interrupt.h"
#include "common/text.h"
#include "compiled/compiled_tier.h"
#include "store/store.h"
#include "wasi/wasi.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

// --dir / --dir-rw HOST[::GUEST]: the guest name defaults to the host
// path, as in wasmtime.
Result<wasi::Preopen> parse_dir(const std::string& text, bool writable) {
  const char* opt = writable ? "--dir-rw" : "--dir";
  const size_t sep = text.find("::");
  wasi::Preopen p{text.substr(0, sep), sep == std::string::npos ? text : text.substr(sep + 2), writable};
  if (p.host.empty() || p.guest.empty()) return err(std::string(opt) + " '" + text + "': expected HOST[::GUEST]");
  if (sep == std::string::npos && writable) {
    // out/{i} is "out" to the program.
    p.guest = replace_all(p.guest, "{i}", "");
    while (p.guest.size() > 1 && p.guest.back() == '/') p.guest.pop_back();
  }
  return p;
}

// Sets `stop` to Timeout at the deadline (seconds; 0 = none) or to
// Interrupted when `cancel` is raised, until finish().
class Watchdog {
 public:
  Watchdog(double seconds, const std::atomic<bool>* cancel, std::atomic<uint8_t>& stop)
      : thread_([this, seconds, cancel, &stop] {
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
          std::unique_lock<std::mutex> lk(mu_);
          while (!done_) {
            // Up to 50 ms between looks at the signal flag.
            cv_.wait_for(lk, std::chrono::milliseconds(50));
            if (cancel && cancel->load()) stop.store(uint8_t(TrapCode::Interrupted));
            if (seconds > 0 && std::chrono::steady_clock::now() >= deadline) stop.store(uint8_t(TrapCode::Timeout));
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

}  // namespace

Result<wasi::Config> wasi_config_of(const RunSpec& spec) {
  wasi::Config config;
  config.args.push_back(spec.module_path);
  config.args.insert(config.args.end(), spec.args.begin(), spec.args.end());
  for (const std::string& e : spec.env) {
    if (e.find('=') == std::string::npos || e[0] == '=') return err("--env '" + e + "': expected NAME=VALUE");
    config.env.push_back(e);
  }
  for (const std::string& d : spec.dirs) {
    WW_ASSIGN_OR_RETURN(wasi::Preopen p, parse_dir(d, false));
    config.preopens.push_back(std::move(p));
  }
  for (const std::string& d : spec.dirs_rw) {
    WW_ASSIGN_OR_RETURN(wasi::Preopen p, parse_dir(d, true));
    // Instances writing the same files would clobber each other.
    if (spec.instances > 1 && p.host.find("{i}") == std::string::npos)
      return err("--dir-rw '" + d + "': a batch's writable directory needs {i} in its host path (one per instance)");
    config.preopens.push_back(std::move(p));
  }
  return config;
}

Result<std::shared_ptr<const batch::WasiBatch>> wasi_batch_of(const RunSpec& spec) {
  for (const std::string& a : spec.args)
    if (a.rfind("@col:", 0) == 0) return err("'" + a + "': a WASI batch's ARGS take @index, not columns (yet)");
  auto w = std::make_shared<batch::WasiBatch>();
  WW_ASSIGN_OR_RETURN(w->config, wasi_config_of(spec));
  w->argv0 = spec.module_path;
  w->args = spec.args;
  w->stdout_pattern = spec.stdout_pattern;
  w->stderr_pattern = spec.stderr_pattern;
  w->stdin_pattern = spec.stdin_pattern;
  if (spec.output_cap) w->output_cap = *spec.output_cap;
  if (spec.seed) {
    w->seed = *spec.seed;
  } else if (getentropy(&w->seed, sizeof w->seed) != 0) {
    return err(std::string("cannot seed random_get: ") + std::strerror(errno));
  }
  return std::shared_ptr<const batch::WasiBatch>(std::move(w));
}

Result<int> run_wasi_command(const RunSpec& spec, std::shared_ptr<const CompiledModule> module) {
  if (spec.backend == "gpu") return err("--backend gpu: WASI programs run on the CPU backend for now");
  if (!spec.mem_in.empty() || !spec.mem_out.empty() || !spec.init.empty())
    return err("--mem-in, --mem-out and --init are for exports called with values, not WASI programs");
  const Module& m = module->module;
  WW_ASSIGN_OR_RETURN(wasi::Config config, wasi_config_of(spec));
  wasi::Context wasi(std::move(config));
  WW_TRY(wasi.open_preopens());

  // --fuel, --timeout and Ctrl-C/SIGTERM as in a batch: a watchdog turns
  // the deadline or the signal into the interrupt byte running code reads.
  std::atomic<uint8_t> stop{0};
  StoreLimits limits;
  limits.fuel = spec.fuel;
  limits.interrupt = &stop;
  InterruptScope interrupt;
  Watchdog watchdog(spec.timeout, interrupt.cancel(), stop);
  Store store(limits);
  if (spec.tier != "interp") {
    compiled::Request req;
    req.module = module;
    req.target = compiled::Target::Cpu;
    req.metered = spec.fuel != 0;
    req.deadline = true;  // the interrupt byte: --timeout and Ctrl-C
    req.cache.enabled = !spec.no_cache;
    req.cache.dir = spec.cache_dir;
    auto native = compiled::compile_cpu(req, nullptr);
    if (native.ok() && *native) {
      store.impl().native_for = [code = *native](const std::shared_ptr<const CompiledModule>&) { return code; };
    } else if (spec.tier == "compiled") {
      return err("--tier compiled: " + (native.ok() ? std::string("no code") : native.error().message));
    }
  }
  std::vector<std::optional<ExternVal>> resolved;
  WW_TRY(wasi.link(store, m, resolved));
  std::vector<ExternVal> imports;
  for (size_t i = 0; i < m.imports.size(); ++i) {
    if (!resolved[i])
      return err("unsatisfied import " + m.imports[i].module + "." + m.imports[i].field + " (" +
                 extern_kind_name(m.imports[i].kind) + ")");
    imports.push_back(*resolved[i]);
  }
  auto inst = store.instantiate(module, imports);
  if (auto* e = std::get_if<InstantiateError>(&inst)) return err(spec.module_path + ": " + e->message);
  wasi.bind(std::get<uint32_t>(inst));
  auto start = store.get_export(std::get<uint32_t>(inst), "_start");
  if (!start || start->kind != ExternKind::Func) return err(spec.module_path + ": a WASI command exports _start");
  InvokeResult r = store.invoke(start->addr, {});
  watchdog.finish();
  std::fflush(stdout);
  if (int sig = interrupt.signal_number()) return 128 + sig;
  if (r.trap == TrapCode::Exit && wasi.exit_code()) return int(*wasi.exit_code() & 0xff);
  if (!r.ok()) {
    print_error(spec.module_path + ": " + (r.trap == TrapCode::Timeout ? "" : "trap: ") + trap_message(r.trap));
    return kExitTrap;
  }
  return kExitOk;
}

}  // namespace ww::cli
