// Executors run a stretch of a batch's instances one way: the CPU
// interpreter, the GPU interpreter kernel, or compiled code on either. The
// driver (batch.cc) picks them and hands each a range, so a batch can start
// on the interpreter and switch to compiled code once it is ready.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "batch/batch.h"
#include "intrinsics/gpu_batch.h"
#include "store/store.h"

namespace ww::batch {

class Resident;

// The state every instance starts from when the batch has --init exports
// or a start function: one instance that ran them, kept live (the GPU
// copies its state) and as a snapshot (CPU instances are made from it).
struct InitImage {
  intrinsics::GpuBatch fallback_batch;
  intrinsics::GpuContext ctx;
  std::unique_ptr<Store> store;
  uint32_t instance = 0;
  InstanceSnapshot snapshot;
};

// The spec resolved against its module, shared by every executor.
struct Job {
  const BatchSpec* spec = nullptr;
  uint32_t func_index = 0;  // the export, in the module's function index space
  // The export's parameters and the results of the chain's last call
  // (the export's own without one).
  FuncType type;
  struct ThenCall {
    uint32_t func_index = 0;
    FuncType type;
  };
  std::vector<ThenCall> then;  // spec->then resolved
  size_t io_slots = 1;         // the most parameters or results of any call
  // A v128 among them: each value's high word travels too (on the CPU in
  // io[io_slots + k], beside value k).
  bool v128_values = false;
  std::shared_ptr<const InitImage> image;  // null: instances instantiate afresh
  // Without an image, on the GPU: a fresh instance made while the GPU's
  // context was still starting (no snapshot), which the GPU's batches
  // copy instead of instantiating in their own time; null: they do.
  std::shared_ptr<const InitImage> gpu_source;
  // The GPUs the batch runs on, each with the memory it may plan with (0:
  // what is free); empty: the calling thread's GPU.
  struct Gpu {
    int device = 0;
    uint64_t memory_budget = 0;
    uint64_t resident_threads = 0;  // instances it runs at once
  };
  std::vector<Gpu> gpus;
  // The GPU's memory layout, Auto resolved (compiled code is built for it).
  MemoryLayout gpu_layout = MemoryLayout::Interleaved;
  std::chrono::steady_clock::time_point t0;  // the batch's start (timeout, get_time)

  double seconds_left() const;  // of the timeout; +inf without one
  bool cancelled() const { return spec->cancel && spec->cancel->load(std::memory_order_relaxed); }
  // Why instances stop early now: TrapCode::Interrupted, ::Timeout, or None.
  TrapCode stop_reason() const;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Backend backend() const = 0;
  virtual Tier tier() const = 0;
  // Runs instances [first, first + count) into `out`, whose arrays are
  // sized for the whole batch. `progress(done)` counts instances of this
  // range that have finished; `ready(upto)`, when given, says that the rows
  // of instances [first, first + upto) will not change again (upto only
  // grows; the whole range is ready when run returns).
  virtual Status run(const Job& job, uint64_t first, uint64_t count, BatchResult& out,
                     const std::function<void(uint64_t done)>& progress,
                     const std::function<void(uint64_t upto)>& ready) = 0;
  // Makes resident instances' state for this executor (Resident): the
  // GPU's wave on the device; the CPU's image, which every instance's
  // saved state is relative to.
  virtual Status start_resident(const Job& job, Resident& r) = 0;
  // What the summary shows: "threads=16", a GPU's name.
  virtual std::string where() const = 0;
};

// The CPU: every instance instantiated in a Store per worker thread, its
// functions run by the interpreter, or by `native` when given.
std::unique_ptr<Executor> make_cpu_executor(std::shared_ptr<const NativeCode> native);
// The GPU's are exec/gpu/executor/gpu_executor.h's.

// A fresh instance of the job's module (made from its image when it has
// one) in a store of its own, its imports linked as the batch links them.
// The store goes before the context its host functions hold.
struct ScratchInstance {
  intrinsics::GpuBatch fallback;
  intrinsics::GpuContext ctx{};
  Store store;
  uint32_t instance = 0;
};
Status make_scratch_instance(const Job& job, ScratchInstance& s);

// Resolves an address export once, on a fresh instance: every GPU instance
// starts from that same state.
Result<uint64_t> resolve_address_fresh(const Job& job, const Address& a);

}  // namespace ww::batch
