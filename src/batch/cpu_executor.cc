// The CPU executor: instances spread over worker threads, each worker with
// its own Store; an instance is instantiated (segments and the start
// function run), gets its memory inputs and arguments, runs the export and
// hands back results, memory outputs and its trap. With compiled code the
// Store attaches it to every new instance (StoreImpl::native_for).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "batch/executor.h"
#include "batch/host_imports.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::batch {
namespace {

TrapCode trap_from_message(const std::string& msg) {
  for (int c = 1; c < 256; ++c) {
    const char* m = trap_message(TrapCode(c));
    if (std::string_view(m) == "unknown trap") break;
    if (msg.starts_with(m)) return TrapCode(c);
  }
  return TrapCode::HostError;
}

// Resolves an address in a live instance; a trap while computing it is the
// instance's trap.
TrapCode resolve_address(Store& store, uint32_t inst, const Address& a, uint64_t& out) {
  if (a.export_name.empty()) {
    out = a.addr;
    return TrapCode::None;
  }
  auto ev = store.get_export(inst, a.export_name);
  if (!ev) return TrapCode::HostError;
  if (a.is_global) {
    out = uint32_t(store.global_get(ev->addr).bits);
    return TrapCode::None;
  }
  InvokeResult r = store.invoke(ev->addr, {});
  if (!r.ok()) return r.trap;
  out = r.results.empty() ? 0 : uint32_t(r.results[0].bits);
  return TrapCode::None;
}

// The `len` bytes at `a` in the instance's memory 0, or the trap that
// stops the instance (the address export's own, or out of bounds).
TrapCode locate(Store& store, uint32_t inst, const Address& a, uint64_t len, uint8_t*& at) {
  uint64_t addr = 0;
  if (TrapCode t = resolve_address(store, inst, a, addr); t != TrapCode::None) return t;
  const auto& mems = store.impl().instances[inst].memories;
  if (mems.empty()) return TrapCode::MemoryOutOfBounds;
  uint64_t size = store.memory_size_bytes(mems[0]);
  if (addr > size || len > size - addr) return TrapCode::MemoryOutOfBounds;
  at = store.memory_data(mems[0]) + addr;
  return TrapCode::None;
}

// Per-worker time in each phase of an instance's life (the summary's
// split), read on one instance in kSampleEvery: the split is a proportion
// of the wall time, and four clock reads per instance were 8% of a batch
// of trivial instances.
struct PhaseClock {
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kSampleEvery = 16;
  uint64_t setup_ns = 0, run_ns = 0, copy_ns = 0;
  Clock::time_point t;
  bool on = false;
  void start(uint64_t instance) {
    on = instance % kSampleEvery == 0;
    if (on) t = Clock::now();
  }
  void lap(uint64_t& acc) {
    if (!on) return;
    auto now = Clock::now();
    acc += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count());
    t = now;
  }
};

TrapCode run_one(Store& store, const std::vector<ExternVal>& imports, const Job& job, uint64_t i,
                 std::vector<Value>& args, BatchResult& out, PhaseClock& clock) {
  const BatchSpec& spec = *job.spec;
  clock.start(i);
  auto r = job.image ? store.instantiate(spec.module, imports, job.image->snapshot)
                     : store.instantiate(spec.module, imports);
  if (auto* e = std::get_if<InstantiateError>(&r)) return trap_from_message(e->message);
  uint32_t inst = std::get<uint32_t>(r);
  for (const MemInput& m : spec.mem_in) {
    uint8_t* at;
    if (TrapCode t = locate(store, inst, m.addr, m.record, at); t != TrapCode::None) return t;
    std::memcpy(at, m.data.data() + i * m.record, m.record);
  }
  const size_t np = job.type.params.size();
  for (size_t k = 0; k < np; ++k) args[k] = arg_value(spec.args[k], job.type.params[k], i);
  auto fn = store.get_export(inst, spec.export_name);
  if (!fn) return TrapCode::HostError;
  clock.lap(clock.setup_ns);
  InvokeResult res = store.invoke(fn->addr, args);
  clock.lap(clock.run_ns);
  if (!res.ok()) return res.trap;
  for (size_t k = 0; k < spec.mem_out.size(); ++k) {
    const MemOutput& m = spec.mem_out[k];
    uint8_t* at;
    if (TrapCode t = locate(store, inst, m.addr, m.length, at); t != TrapCode::None) return t;
    std::memcpy(out.mem_out[k].data() + i * m.length, at, m.length);
  }
  const size_t nr = job.type.results.size();
  for (size_t k = 0; k < nr && k < res.results.size(); ++k) out.results[i * nr + k] = res.results[k].bits;
  clock.lap(clock.copy_ns);
  return TrapCode::None;
}

// A store never removes instances, and a batch makes millions: each
// finished instance's storage is released (nothing else can reach it), and
// a worker starts a fresh store every kInstancesPerStore instances for the
// small records that stay.
constexpr uint64_t kInstancesPerStore = 16384;

class CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(std::shared_ptr<const NativeCode> native) : native_(std::move(native)) {}

  Backend backend() const override { return Backend::Cpu; }
  Tier tier() const override { return native_ ? Tier::Compiled : Tier::Interp; }
  std::string where() const override { return "threads=" + std::to_string(threads_); }

  // The calling thread waits for the workers, waking for progress lines
  // and to turn the deadline or a cancellation into the interrupt byte that
  // running instances read at back-edges.
  Status run(const Job& job, uint64_t first, uint64_t count, BatchResult& out,
             const std::function<void(uint64_t)>& progress) override {
    const BatchSpec& spec = *job.spec;
    unsigned threads = spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
    if (uint64_t(threads) > count) threads = unsigned(std::max<uint64_t>(count, 1));
    threads_ = std::max(threads_, threads);

    Shared sh;
    sh.chunk = std::clamp<uint64_t>(count / (uint64_t(threads) * 16), 1, 256);
    sh.running = threads;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        try {
          work(job, first, count, sh, out);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> g(sh.mu);
          if (sh.fail_msg.empty()) sh.fail_msg = std::string("instance failed: ") + e.what();
          sh.failed = true;
        }
        std::lock_guard<std::mutex> g(sh.mu);
        if (--sh.running == 0) sh.cv.notify_all();
      });
    {
      std::unique_lock<std::mutex> lk(sh.mu);
      while (sh.running > 0) {
        // Up to 100 ms between looks at the clock and the cancel flag; the
        // last worker's notify ends the wait at once.
        double wait_s = std::min(0.1, std::max(job.seconds_left(), 0.001));
        sh.cv.wait_for(lk, std::chrono::duration<double>(wait_s), [&] { return sh.running == 0; });
        if (TrapCode why = job.stop_reason(); why != TrapCode::None && !sh.interrupt.load())
          sh.interrupt.store(uint8_t(why));
        if (progress) progress(sh.done.load());
      }
    }
    for (auto& t : pool) t.join();
    if (spec.intrinsics && spec.intrinsics->image) spec.intrinsics->image->blank = false;
    // The workers' summed time per phase, scaled to this range's wall time.
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double busy = double(sh.setup_ns + sh.run_ns + sh.copy_ns);
    if (busy > 0) {
      out.phases.memory_setup += wall_ms * double(sh.setup_ns) / busy;
      out.phases.kernel += wall_ms * double(sh.run_ns) / busy;
      out.phases.download += wall_ms * double(sh.copy_ns) / busy;
    }
    if (sh.failed) return make_error(kNoOffset, sh.fail_msg);
    return Status::Ok();
  }

 private:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    unsigned running = 0;
    bool failed = false;
    std::string fail_msg;
    uint64_t chunk = 1;
    std::atomic<uint64_t> next{0}, done{0};
    std::atomic<uint8_t> interrupt{0};  // TrapCode that stops running code
    std::atomic<uint64_t> setup_ns{0}, run_ns{0}, copy_ns{0};
  };

  void work(const Job& job, uint64_t first, uint64_t count, Shared& sh, BatchResult& out) const {
    const BatchSpec& spec = *job.spec;
    StoreLimits limits;
    limits.fuel = spec.fuel;
    limits.interrupt = &sh.interrupt;
    std::unique_ptr<Store> store;
    std::vector<ExternVal> imports;
    gpu::GpuBatch fallback;
    gpu::GpuContext ctx{spec.intrinsics ? spec.intrinsics : &fallback, 0};
    uint64_t made = 0;
    std::vector<Value> args(job.type.params.size());
    PhaseClock clock;
    while (!sh.failed) {
      uint64_t begin = sh.next.fetch_add(sh.chunk);
      if (begin >= count) break;
      uint64_t end = std::min(count, begin + sh.chunk);
      for (uint64_t i = first + begin; i < first + end; ++i) {
        if (sh.interrupt.load(std::memory_order_relaxed)) continue;  // reported as not finished
        if (!store || made >= kInstancesPerStore) {
          store = std::make_unique<Store>(limits);
          if (native_) {
            // Every instance holds the code: through this worker's own
            // owner, so that its reference counting never shares a cache
            // line with another worker's (it was 10% of a trivial batch).
            auto owner = std::make_shared<std::shared_ptr<const NativeCode>>(native_);
            std::shared_ptr<const NativeCode> mine(owner, owner->get());
            store->impl().native_for = [mine](const std::shared_ptr<const CompiledModule>&) { return mine; };
          }
          auto linked = link_imports(*store, spec.module->module, &ctx);
          if (!linked.ok()) throw std::runtime_error(linked.error().message);
          imports = std::move(*linked);
          made = 0;
        }
        ctx.instance_index = uint32_t(i);
        store->impl().last_trap = TrapInfo{};
        TrapCode t = run_one(*store, imports, job, i, args, out, clock);
        store->release_instance_storage(uint32_t(store->impl().instances.size() - 1));
        ++made;
        // An instance the interrupt stopped did not finish.
        if (t == TrapCode::Timeout || t == TrapCode::Interrupted) continue;
        out.traps[i] = uint8_t(t);
        const TrapInfo& where = store->impl().last_trap;
        out.trap_func[i] = where.func_index;
        out.trap_pc[i] = where.code != TrapCode::None ? where.pc : gpu::kNoTrapPc;
        out.finished[i] = 1;
        sh.done.fetch_add(1, std::memory_order_relaxed);
      }
    }
    sh.setup_ns += clock.setup_ns;
    sh.run_ns += clock.run_ns;
    sh.copy_ns += clock.copy_ns;
  }

  std::shared_ptr<const NativeCode> native_;
  unsigned threads_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor(std::shared_ptr<const NativeCode> native) {
  return std::make_unique<CpuExecutor>(std::move(native));
}

}  // namespace ww::batch
