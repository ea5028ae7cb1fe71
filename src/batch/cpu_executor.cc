// The CPU executor: instances spread over worker threads, each worker with
// its own Store and, where it can, one instance that every input of the
// worker runs in, reset to the image between them (WorkerInstances); an
// input gets its memory inputs and arguments (for a WASI command its argv
// and stdio), runs the export and hands back results, memory outputs and
// its trap. With compiled code the Store attaches it to every instance
// (StoreImpl::native_for).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "batch/executor.h"
#include "batch/host_imports.h"
#include "batch/resident.h"
#include "batch/wasi_input.h"
#include "common/cores.h"
#include "common/text.h"
#include "wasm/instr_reader.h"

namespace ww::batch {
namespace {

// An instance with the exports a batch reads resolved once: a worker
// that reuses its instance pays for the name lookups once, not per input.
struct BoundInstance {
  // Where an address comes from: a fixed number, a global, or a function
  // called for it (its result may depend on the instance, so it is called
  // per input).
  struct Source {
    enum Kind : uint8_t { Fixed, Global, Call } kind = Fixed;
    uint64_t value = 0;                         // the address, or the global's or function's store address
    std::shared_ptr<Store::PreparedCall> call;  // Call
  };
  uint32_t instance = 0;
  std::shared_ptr<Store::PreparedCall> func;               // the batch's export
  std::vector<std::shared_ptr<Store::PreparedCall>> then;  // the chain's calls (BatchSpec::then)
  MemoryInst* mem = nullptr;                               // memory 0
  std::vector<Source> mem_in, mem_out;
  wasi::Context* wasi = nullptr;  // a WASI command's calls
};

// The value a defined function returns when its whole body is one
// i32.const: calling it has no effect but that value, so an address it
// gives is read once (hash-wasm's Hash_GetBuffer: its two calls per input
// would be a large share of a crc32 batch, bench/hashwasm/run-cpu.sh).
std::optional<uint32_t> constant_body(const Module& m, uint32_t func_index) {
  if (func_index < m.num_imported_funcs) return std::nullopt;
  const FunctionBody& body = m.codes[func_index - m.num_imported_funcs];
  if (!body.locals.empty()) return std::nullopt;
  ByteReader r(m.bytes.data() + body.body_offset, body.body_end - body.body_offset, body.body_offset);
  Instr value, end;
  if (!read_instr(r, value).ok() || value.op != Opcode::I32Const) return std::nullopt;
  if (!read_instr(r, end).ok() || end.op != Opcode::End || !r.at_end()) return std::nullopt;
  return uint32_t(value.imm);
}

// False when an export the batch names is missing (the instance's trap is
// then HostError, as before any of it ran).
bool bind(Store& store, uint32_t inst, const BatchSpec& spec, BoundInstance& b) {
  b.instance = inst;
  auto fn = store.get_export(inst, spec.export_name);
  if (!fn || !(b.func = store.prepare_call(fn->addr))) return false;
  b.then.clear();
  for (const BatchSpec::ThenCall& c : spec.then) {
    auto f = store.get_export(inst, c.export_name);
    if (!f) return false;
    b.then.push_back(store.prepare_call(f->addr));
    if (!b.then.back()) return false;
  }
  const auto& mems = store.impl().instances[inst].memories;
  b.mem = mems.empty() ? nullptr : &store.impl().memories[mems[0]];
  auto source = [&](const Address& a, BoundInstance::Source& out) {
    if (a.export_name.empty()) {
      out = {BoundInstance::Source::Fixed, a.addr, nullptr};
      return true;
    }
    auto ev = store.get_export(inst, a.export_name);
    if (!ev) return false;
    out = {a.is_global ? BoundInstance::Source::Global : BoundInstance::Source::Call, ev->addr, nullptr};
    if (!a.is_global) {
      const Module& m = store.instance_module(inst).module;
      for (const Export& e : m.exports)
        if (e.kind == ExternKind::Func && e.name == a.export_name)
          if (auto v = constant_body(m, e.index)) out = {BoundInstance::Source::Fixed, *v, nullptr};
    }
    if (out.kind == BoundInstance::Source::Call && !(out.call = store.prepare_call(ev->addr))) return false;
    return true;
  };
  b.mem_in.resize(spec.mem_in.size());
  b.mem_out.resize(spec.mem_out.size());
  for (size_t k = 0; k < spec.mem_in.size(); ++k)
    if (!source(spec.mem_in[k].addr, b.mem_in[k])) return false;
  for (size_t k = 0; k < spec.mem_out.size(); ++k)
    if (!source(spec.mem_out[k].addr, b.mem_out[k])) return false;
  return true;
}

// The `len` bytes at the source's address in memory 0, or the trap that
// stops the instance (the address function's own, or out of bounds).
TrapCode locate(Store& store, const BoundInstance& b, const BoundInstance::Source& src, uint64_t len, uint64_t& addr) {
  switch (src.kind) {
    case BoundInstance::Source::Fixed: addr = src.value; break;
    case BoundInstance::Source::Global: addr = uint32_t(store.global_get(uint32_t(src.value)).bits); break;
    case BoundInstance::Source::Call: {
      uint64_t io[1] = {0};
      if (TrapCode t = store.invoke_slots(*src.call, io); t != TrapCode::None) return t;
      addr = uint32_t(io[0]);
      break;
    }
  }
  if (!b.mem) return TrapCode::MemoryOutOfBounds;
  const uint64_t size = b.mem->data.size();
  if (addr > size || len > size - addr) return TrapCode::MemoryOutOfBounds;
  return TrapCode::None;
}

// Per-worker time in each phase of an instance's life (the summary's
// split), read on one instance in kSampleEvery: the split is a proportion
// of the wall time, and four clock reads per instance would be a large
// share of a batch of trivial instances; one in 16 still shows in perf's
// profile of hash-wasm's crc32 (bench/hashwasm/run-cpu.sh). Instance 0 is
// always read.
struct PhaseClock {
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kSampleEvery = 256;
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

TrapCode run_one(Store& store, const BoundInstance& b, const Job& job, uint64_t i, uint64_t* io, BatchResult& out,
                 PhaseClock& clock) {
  const BatchSpec& spec = *job.spec;
  for (size_t k = 0; k < spec.mem_in.size(); ++k) {
    const MemInput& m = spec.mem_in[k];
    uint64_t addr;
    if (TrapCode t = locate(store, b, b.mem_in[k], m.record, addr); t != TrapCode::None) return t;
    std::memcpy(b.mem->data.data() + addr, m.bytes.data() + i * m.record, m.record);
    b.mem->mark_written(addr, m.record);
  }
  // v128 arguments are constants: their high words once, from the spec.
  uint64_t* io_hi = job.v128_values ? io + job.io_slots : nullptr;
  auto set_args = [&](const std::vector<ArgSource>& args, const std::vector<ValType>& params) {
    for (size_t k = 0; k < params.size(); ++k) {
      io[k] = arg_value(args[k], params[k], i, spec.index_base + i).bits;
      if (io_hi) io_hi[k] = args[k].value.hi;
    }
  };
  set_args(spec.args, job.type.params);
  if (b.wasi) io[0] = 0;  // the exit code when _start returns
  clock.lap(clock.setup_ns);
  TrapCode t = store.invoke_slots(*b.func, io, io_hi);
  clock.lap(clock.run_ns);
  if (t == TrapCode::Exit && b.wasi && b.wasi->exit_code()) {
    io[0] = *b.wasi->exit_code();
    t = TrapCode::None;
  }
  // The chain: each call on the state the one before left; each gets the
  // fuel of a call of its own, as a top-level invoke does.
  for (size_t c = 0; c < b.then.size() && t == TrapCode::None; ++c) {
    const BatchSpec::ThenCall& call = spec.then[c];
    const std::vector<ValType>& params = job.then[c].type.params;
    for (uint64_t r = 0; r < call.repeat && t == TrapCode::None; ++r) {
      set_args(call.args, params);
      t = store.invoke_slots(*b.then[c], io, io_hi);
    }
  }
  clock.lap(clock.run_ns);
  if (t != TrapCode::None) return t;
  for (size_t k = 0; k < spec.mem_out.size(); ++k) {
    const MemOutput& m = spec.mem_out[k];
    uint64_t addr;
    if (TrapCode t = locate(store, b, b.mem_out[k], m.length, addr); t != TrapCode::None) return t;
    std::memcpy(out.mem_out[k].data() + i * m.length, b.mem->data.data() + addr, m.length);
  }
  const size_t nr = job.type.results.size();
  if (!out.results32.empty()) std::copy(io, io + nr, out.results32.data() + i * nr);  // narrowed
  else std::copy(io, io + nr, out.results.data() + i * nr);
  if (!out.results_hi.empty()) std::copy(io_hi, io_hi + nr, out.results_hi.data() + i * nr);
  clock.lap(clock.copy_ns);
  return TrapCode::None;
}

// A worker's store and the instance each input runs in. With an image to
// return to (the batch's, from --init or a start function, or else the
// worker's own snapshot of a fresh instance), one instance serves every
// input and is reset between them (Store::reset_instance): instantiating
// afresh would cost an input many times what node's whole call of
// hash-wasm's crc32 does, most of it zeroing memory
// (bench/hashwasm/run-cpu.sh). Without one (a snapshot cannot carry
// references to host functions; instantiation trapped), each input gets a
// fresh instance, whose storage is released after it; a store never
// removes instances, so the worker starts a fresh store every
// kInstancesPerStore of them for the small records that stay.
class WorkerInstances {
 public:
  static constexpr uint64_t kInstancesPerStore = 16384;

  WorkerInstances(const Job& job, StoreLimits limits, std::shared_ptr<const NativeCode> native,
                  intrinsics::GpuContext* ctx)
      : job_(job), limits_(limits), native_(std::move(native)), ctx_(ctx) {
    if (job.image) image_ = &job.image->snapshot;
    // Resident instances' saved states are changes to their own image.
    if (job.spec->resident) image_ = &job.spec->resident->cpu().image;
    if (const WasiBatch* w = job.spec->wasi ? job.spec->wasi.get() : job.spec->files.get()) {
      wasi_ = std::make_unique<wasi::Context>(w->config);
      if (Status s = wasi_->open_preopens(); !s.ok()) throw std::runtime_error(s.error().message);
    }
  }

  wasi::Context* wasi() { return wasi_.get(); }

  Store& store() { return *store_; }

  // The instance for the next input, or the trap that stands for it.
  TrapCode acquire(const BoundInstance*& out) {
    out = &bound_;
    if (!store_ || (!reusing_ && made_ >= kInstancesPerStore)) new_store();
    store_->impl().last_trap = TrapInfo{};
    if (!decided_) decide();
    if (reusing_) return TrapCode::None;
    if (job_.spec->resident)
      throw std::runtime_error("resident instances: the module's instances cannot be kept on the CPU (" +
                               std::string(made_fresh_error_) + ")");
    ++made_;
    auto r = image_ ? store_->instantiate(job_.spec->module, imports_, *image_)
                    : store_->instantiate(job_.spec->module, imports_);
    if (auto* e = std::get_if<InstantiateError>(&r)) return fresh_failed(e->message);
    if (!bind(*store_, std::get<uint32_t>(r), *job_.spec, bound_)) return TrapCode::HostError;
    bind_wasi();
    return TrapCode::None;
  }

  // The input is done with its instance.
  void release() {
    if (reusing_) {
      if (!store_->reset_instance(bound_.instance, *image_).ok()) reusing_ = false;
      return;
    }
    store_->release_instance_storage(uint32_t(store_->impl().instances.size() - 1));
  }

 private:
  void new_store() {
    store_ = std::make_unique<Store>(limits_);
    if (native_) {
      // Every instance holds the code: through this worker's own owner, so
      // that its reference counting never shares a cache line with another
      // worker's (shared, it would be a large share of a trivial batch).
      auto owner = std::make_shared<std::shared_ptr<const NativeCode>>(native_);
      std::shared_ptr<const NativeCode> mine(owner, owner->get());
      store_->impl().native_for = [mine](const std::shared_ptr<const CompiledModule>&) { return mine; };
    }
    auto linked = link_imports(*store_, job_.spec->module->module, ctx_, wasi_.get(), &job_.spec->host_functions,
                               job_.spec->unknown_imports);
    if (!linked.ok()) throw std::runtime_error(linked.error().message);
    imports_ = std::move(*linked);
    made_ = 0;
  }

  // Whether this worker can keep one instance: it needs an image, and the
  // instance it makes from it must have the batch's exports.
  void decide() {
    decided_ = true;
    if (!image_) {
      // No start function and no --init: a fresh instance's state is the
      // same for every input, so its snapshot serves as the image.
      auto r = store_->instantiate(job_.spec->module, imports_);
      if (!std::holds_alternative<uint32_t>(r)) return;
      const uint32_t scratch = std::get<uint32_t>(r);
      auto snap = store_->snapshot(scratch);
      store_->release_instance_storage(scratch);
      if (!snap.ok()) return;
      own_image_ = std::move(*snap);
      image_ = &own_image_;
    }
    auto r = store_->instantiate(job_.spec->module, imports_, *image_);
    if (!std::holds_alternative<uint32_t>(r)) return;
    const uint32_t inst = std::get<uint32_t>(r);
    reusing_ = bind(*store_, inst, *job_.spec, bound_);
    if (reusing_) bind_wasi();
    if (!reusing_) store_->release_instance_storage(inst);
  }

  void bind_wasi() {
    if (!wasi_) return;
    wasi_->bind(bound_.instance);
    bound_.wasi = wasi_.get();
  }

  TrapCode fresh_failed(const std::string& msg) {
    for (int c = 1; c < 256; ++c) {
      const char* m = trap_message(TrapCode(c));
      if (std::string_view(m) == "unknown trap") break;
      if (msg.starts_with(m)) return TrapCode(c);
    }
    return TrapCode::HostError;
  }

  const Job& job_;
  StoreLimits limits_;
  std::shared_ptr<const NativeCode> native_;
  intrinsics::GpuContext* ctx_;
  std::unique_ptr<Store> store_;
  std::vector<ExternVal> imports_;
  uint64_t made_ = 0;
  const InstanceSnapshot* image_ = nullptr;
  InstanceSnapshot own_image_;
  bool decided_ = false, reusing_ = false;
  const char* made_fresh_error_ = "no instance could be made from its image with the batch's exports";
  BoundInstance bound_;
  std::unique_ptr<wasi::Context> wasi_;
};

class CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(std::shared_ptr<const NativeCode> native) : native_(std::move(native)) {}

  Backend backend() const override { return Backend::Cpu; }
  // Code that tiers up (a profile) runs both tiers: the auto tier.
  Tier tier() const override { return !native_ ? Tier::Interp : native_->profile() ? Tier::Auto : Tier::Compiled; }
  std::string where() const override { return "threads=" + std::to_string(threads_); }

  Status start_resident(const Job& job, Resident& r) override {
    Resident::Cpu& c = r.cpu();
    if (job.image) {
      c.image = job.image->snapshot;
    } else {
      ScratchInstance scratch;
      if (Status s = make_scratch_instance(job, scratch); !s.ok())
        return make_error(kNoOffset, "resident instances: " + s.error().message);
      WW_ASSIGN_OR_RETURN(c.image, scratch.store.snapshot(scratch.instance));
    }
    c.deltas.assign(r.instances(), InstanceDelta{});
    c.traps.assign(r.instances(), 0);
    c.trap_func.assign(r.instances(), 0);
    c.trap_pc.assign(r.instances(), kNoTrapPc);
    return Status::Ok();
  }

  // The calling thread waits for the workers, waking for progress lines
  // and to turn the deadline or a cancellation into the interrupt byte that
  // running instances read at back-edges.
  Status run(const Job& job, uint64_t first, uint64_t count, BatchResult& out,
             const std::function<void(uint64_t)>& progress, const std::function<void(uint64_t)>& ready) override {
    const BatchSpec& spec = *job.spec;
    unsigned threads = spec.threads ? spec.threads : usable_cores();
    if (uint64_t(threads) > count) threads = unsigned(std::max<uint64_t>(count, 1));
    threads_ = std::max(threads_, threads);

    Shared sh;
    sh.chunk = std::clamp<uint64_t>(count / (uint64_t(threads) * 16), 1, 256);
    // A flag per chunk, so that the waiting thread can tell how far the
    // range is done without gaps (workers finish chunks out of order).
    std::unique_ptr<std::atomic<uint8_t>[]> chunk_done;
    uint64_t ready_chunks = 0;
    const uint64_t nchunks = (count + sh.chunk - 1) / sh.chunk;
    if (ready) {
      chunk_done = std::make_unique<std::atomic<uint8_t>[]>(nchunks);
      sh.chunk_done = chunk_done.get();
    }
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
        if (ready) {
          const uint64_t before = ready_chunks;
          while (ready_chunks < nchunks && chunk_done[ready_chunks].load(std::memory_order_acquire)) ++ready_chunks;
          if (ready_chunks > before) ready(std::min(count, ready_chunks * sh.chunk));
        }
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
    out.output_capped += sh.capped.load();
    out.first_output_capped = std::min(out.first_output_capped, sh.first_capped.load());
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
    std::atomic<uint64_t> capped{0}, first_capped{~uint64_t{0}};  // WASI output cut at the cap
    std::atomic<uint8_t>* chunk_done = nullptr;                   // set per chunk once its rows are final
  };

  void work(const Job& job, uint64_t first, uint64_t count, Shared& sh, BatchResult& out) const {
    const BatchSpec& spec = *job.spec;
    StoreLimits limits;
    limits.fuel = spec.fuel;
    limits.interrupt = &sh.interrupt;
    intrinsics::GpuBatch fallback;
    intrinsics::GpuContext ctx{spec.intrinsics ? spec.intrinsics : &fallback, 0};
    WorkerInstances instances(job, limits, native_, &ctx);
    Resident::Cpu* resident = spec.resident ? &spec.resident->cpu() : nullptr;
    std::vector<uint64_t> io(job.io_slots * (job.v128_values ? 2 : 1));
    PhaseClock clock;
    while (!sh.failed) {
      uint64_t begin = sh.next.fetch_add(sh.chunk);
      if (begin >= count) break;
      uint64_t end = std::min(count, begin + sh.chunk);
      // Counted once per chunk: an atomic add per instance on a line every
      // worker writes costs more than resetting a small instance.
      uint64_t finished = 0;
      for (uint64_t i = first + begin; i < first + end; ++i) {
        // Not finished: the row says why at once (it may be written out
        // before the batch ends).
        if (const uint8_t why = sh.interrupt.load(std::memory_order_relaxed)) {
          out.traps[i] = why;
          continue;
        }
        const uint64_t index = spec.index_base + i;  // what the instance sees
        ctx.instance_index = uint32_t(index);
        // A resident instance that trapped in an earlier batch keeps its trap.
        if (resident && resident->traps[i]) {
          out.traps[i] = resident->traps[i];
          out.trap_func[i] = resident->trap_func[i];
          out.trap_pc[i] = resident->trap_pc[i];
          out.finished[i] = 1;
          ++finished;
          continue;
        }
        clock.start(i);
        const BoundInstance* b = nullptr;
        TrapCode t = instances.acquire(b);
        Store& store = instances.store();
        if (resident && t == TrapCode::None)
          if (Status s = store.apply_delta(b->instance, resident->deltas[i]); !s.ok())
            throw std::runtime_error(s.error().message);
        std::optional<WasiInput> wasi_input;
        if (spec.wasi && t == TrapCode::None) {
          wasi_input.emplace(*spec.wasi, index, out.stdout_blocks.empty() ? nullptr : &out.stdout_blocks[i],
                             out.stderr_blocks.empty() ? nullptr : &out.stderr_blocks[i]);
          wasi_input->start(*instances.wasi(), spec.wasi->seed + index);
        } else if (spec.files && t == TrapCode::None) {
          // The instance's own writable directories ({i}).
          wasi_input.emplace(*spec.files, index, nullptr, nullptr);
          wasi_input->start(*instances.wasi(), spec.files->seed + index);
        }
        if (t == TrapCode::None) t = run_one(store, *b, job, i, io.data(), out, clock);
        if (wasi_input && instances.wasi()->output_capped()) {
          ++sh.capped;
          for (uint64_t seen = sh.first_capped.load(); i < seen && !sh.first_capped.compare_exchange_weak(seen, i);) {
          }
        }
        wasi_input.reset();
        const TrapInfo where = store.impl().last_trap;
        if (resident) {
          // What the instance is now, kept for the next batch; one that
          // stopped partway (a trap, the timeout) is done for good.
          if (t == TrapCode::None) {
            if (Status s = store.capture_delta(b->instance, resident->deltas[i]); !s.ok())
              throw std::runtime_error(s.error().message);
          } else {
            resident->traps[i] = uint8_t(t);
            resident->trap_func[i] = where.func_index;
            resident->trap_pc[i] = where.code != TrapCode::None ? where.pc : kNoTrapPc;
            resident->deltas[i] = {};
          }
        }
        instances.release();
        clock.lap(clock.setup_ns);  // the reset belongs to the next input's set-up
        // An instance the interrupt stopped did not finish.
        if (t == TrapCode::Timeout || t == TrapCode::Interrupted) {
          out.traps[i] = uint8_t(t);
          continue;
        }
        // The trap columns start zeroed (size_result), which is a clean
        // row's: three stores an input to cold lines are left out.
        if (t != TrapCode::None) {
          out.traps[i] = uint8_t(t);
          out.trap_func[i] = where.func_index;
          out.trap_pc[i] = where.code != TrapCode::None ? where.pc : kNoTrapPc;
        }
        out.finished[i] = 1;
        ++finished;
      }
      sh.done.fetch_add(finished, std::memory_order_relaxed);
      if (sh.chunk_done) sh.chunk_done[begin / sh.chunk].store(1, std::memory_order_release);
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
