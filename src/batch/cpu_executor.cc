// The CPU executor: instances spread over worker threads, each worker with
// its own Store; an instance is instantiated (segments and the start
// function run), gets its memory inputs and arguments, runs the export and
// hands back results, memory outputs and its trap. With compiled code the
// Store attaches it to every new instance (StoreImpl::native_for).
#include <algorithm>
#include <atomic>
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

TrapCode run_one(Store& store, const std::vector<ExternVal>& imports, const Job& job, uint64_t i,
                 std::vector<Value>& args, BatchResult& out) {
  const BatchSpec& spec = *job.spec;
  auto r = store.instantiate(spec.module, imports);
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
  InvokeResult res = store.invoke(fn->addr, args);
  if (!res.ok()) return res.trap;
  for (size_t k = 0; k < spec.mem_out.size(); ++k) {
    const MemOutput& m = spec.mem_out[k];
    uint8_t* at;
    if (TrapCode t = locate(store, inst, m.addr, m.length, at); t != TrapCode::None) return t;
    std::memcpy(out.mem_out[k].data() + i * m.length, at, m.length);
  }
  const size_t nr = job.type.results.size();
  for (size_t k = 0; k < nr && k < res.results.size(); ++k) out.results[i * nr + k] = res.results[k].bits;
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

  // --timeout stops handing out instances once it has passed; an instance
  // already running finishes (--fuel bounds a runaway one on the CPU).
  Status run(const Job& job, uint64_t first, uint64_t count, BatchResult& out,
             const std::function<void(uint64_t)>& progress) override {
    const BatchSpec& spec = *job.spec;
    unsigned threads = spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
    if (uint64_t(threads) > count) threads = unsigned(std::max<uint64_t>(count, 1));
    threads_ = std::max(threads_, threads);

    std::atomic<uint64_t> done{0}, next{0};
    std::atomic<bool> failed{false};
    std::mutex fail_mu;
    std::string fail_msg;
    const uint64_t chunk = std::clamp<uint64_t>(count / (uint64_t(threads) * 16), 1, 256);
    auto worker = [&] {
      try {
        work(job, first, count, chunk, next, done, failed, out);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> g(fail_mu);
        if (fail_msg.empty()) fail_msg = std::string("instance failed: ") + e.what();
        failed = true;
      }
    };
    std::atomic<unsigned> running{threads};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        worker();
        running.fetch_sub(1);
      });
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (progress) progress(done.load());
    }
    for (auto& t : pool) t.join();
    if (failed) return make_error(kNoOffset, fail_msg);
    return Status::Ok();
  }

 private:
  void work(const Job& job, uint64_t first, uint64_t count, uint64_t chunk,
            std::atomic<uint64_t>& next, std::atomic<uint64_t>& done, std::atomic<bool>& failed,
            BatchResult& out) const {
    const BatchSpec& spec = *job.spec;
    StoreLimits limits;
    limits.fuel = spec.fuel;
    std::unique_ptr<Store> store;
    std::vector<ExternVal> imports;
    gpu::GpuBatch fallback;
    gpu::GpuContext ctx{spec.intrinsics ? spec.intrinsics : &fallback, 0};
    uint64_t made = 0;
    std::vector<Value> args(job.type.params.size());
    while (!failed.load(std::memory_order_relaxed)) {
      uint64_t begin = next.fetch_add(chunk);
      if (begin >= count) break;
      uint64_t end = std::min(count, begin + chunk);
      for (uint64_t i = first + begin; i < first + end; ++i) {
        if (!store || made >= kInstancesPerStore) {
          store = std::make_unique<Store>(limits);
          if (native_) {
            store->impl().native_for = [n = native_](const std::shared_ptr<const CompiledModule>&) { return n; };
          }
          auto linked = link_imports(*store, spec.module->module, &ctx);
          if (!linked.ok()) throw std::runtime_error(linked.error().message);
          imports = std::move(*linked);
          made = 0;
        }
        if (job.deadline_passed()) continue;  // reported as not finished
        ctx.instance_index = uint32_t(i);
        store->impl().last_trap = TrapInfo{};
        out.traps[i] = uint8_t(run_one(*store, imports, job, i, args, out));
        const TrapInfo& where = store->impl().last_trap;
        out.trap_func[i] = where.func_index;
        out.trap_pc[i] = where.code != TrapCode::None ? where.pc : gpu::kNoTrapPc;
        out.finished[i] = 1;
        done.fetch_add(1, std::memory_order_relaxed);
        store->release_instance_storage(uint32_t(store->impl().instances.size() - 1));
        ++made;
      }
    }
  }

  std::shared_ptr<const NativeCode> native_;
  unsigned threads_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor(std::shared_ptr<const NativeCode> native) {
  return std::make_unique<CpuExecutor>(std::move(native));
}

}  // namespace ww::batch
