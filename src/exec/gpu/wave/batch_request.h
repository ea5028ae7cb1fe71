// One GPU batch's request and its outcome (run_batch, ResidentBatch): the
// module and its export, the instances' arguments and memory inputs and
// outputs, limits and callbacks, and per instance the results, traps and
// finished flags, with the plan the waves ran under and the phases' times.
// Plain C++ (no CUDA types).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/gpu/host_calls/host_call_server.h"
#include "exec/gpu/plan/memory_layout.h"
#include "exec/gpu/tuning.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/runtime.h"

namespace ww::gpu {

using intrinsics::GpuBatch;
class KernelLauncher;  // driver/kernel_launcher.cuh

// Bytes written into each instance's memory before the call: record i of
// `data` (record_size bytes) goes to instance i at `address`.
struct MemIn {
  uint32_t address = 0;
  uint32_t record_size = 0;
  const uint8_t* data = nullptr;  // instances * record_size bytes
};
// Bytes read from each instance's memory after the call into `data`
// (instances * length bytes, instance order).
struct MemOut {
  uint32_t address = 0;
  uint32_t length = 0;
  uint8_t* data = nullptr;
};

struct BatchPlan {
  MemoryLayout layout = MemoryLayout::Interleaved;  // never Auto
  // Dense layouts: the memory capacity; sparse: the pool bytes the plan
  // expects an instance to take (measured ones are in RunResult).
  uint64_t linear_bytes_per_instance = 0;
  uint64_t overhead_bytes_per_instance = 0;  // frames, call records, globals, tables, status
  uint32_t memory_pages = 0;                 // capacity (reserved, for sparse)
  // Sparse: bytes of one instance's part of a chunk, and the pool.
  uint32_t chunk_shift = 0;
  uint64_t pool_bytes = 0;      // the pool the first wave gets
  uint64_t pool_bytes_max = 0;  // what it may grow to when a wave runs out
  // Sparse memory nothing writes: every group reads one chunk table of
  // zeros (a table per group would be 256 bytes of each instance's 302 for
  // a Rust module's 16 pages, and zeroing it a visible cost at 10M
  // instances).
  bool chunk_table_shared = false;
  uint32_t wave_size = 0;   // the largest wave the buffers hold
  uint32_t first_wave = 0;  // sparse: the first wave's size; later ones follow the measured pool use
  uint32_t waves = 0;       // planned (dense) or run
  uint64_t device_free_bytes = 0;
  std::string to_string() const;
};

struct BatchRequest {
  std::shared_ptr<const CompiledModule> module;
  uint32_t func_index = 0;  // module function index of the export (a defined function)
  uint32_t instances = 0;
  // A request may be one stretch of a larger batch: instance t of it is
  // instance index_base + t of the batch (gpu.get_thread_id), which has
  // total_instances instances (gpu.instance_count; 0 = `instances`).
  uint32_t index_base = 0;
  uint32_t total_instances = 0;
  // Arguments as raw 64-bit values: one row of nparams for every instance
  // (args_per_instance) or a single row shared by all. A v128's high word
  // comes in args_hi (per parameter, the same for every instance; empty:
  // zeros): only constants are v128, the other ways in carry scalars.
  std::vector<uint64_t> args;
  std::vector<uint64_t> args_hi;
  bool args_per_instance = false;
  // Instead of per-instance `args`: fills the arguments of instances
  // [first, first + n) parameter-major (value k of instance first + t at
  // io[k * n + t]), one wave at a time, so a huge batch never holds them all.
  std::function<void(uint32_t first, uint32_t n, uint64_t* io)> fill_args;
  // With one shared row of `args`: per parameter, non-zero when it is the
  // instance's index instead (1 i32, 2 i64, 3 f32, 4 f64), computed on the
  // device: @index arguments cost no host memory and no upload.
  std::vector<uint8_t> arg_index_kind;

  // Calls after the export, on the same instances, in order, `repeat`
  // times each, with the arguments above's uniform kinds (a row of values
  // and index kinds); the results are the last call's. The whole chain
  // runs in one launch per wave, or with launch_per_call one launch per
  // call (the state stays on the device either way).
  struct ThenCall {
    uint32_t func_index = 0;  // a defined function
    uint32_t repeat = 1;
    std::vector<uint64_t> args, args_hi;  // as the request's
    std::vector<uint8_t> arg_index_kind;  // per parameter, as arg_index_kind (empty: none)
  };
  std::vector<ThenCall> then;
  bool launch_per_call = false;
  // A resident batch's (make_resident): one wave of all the instances,
  // argument and result buffers for every export, memory inputs and
  // outputs per call.
  bool resident = false;
  // The function whose results the batch returns: the chain's last.
  uint32_t result_func() const { return then.empty() ? func_index : then.back().func_index; }

  // Arguments and results in GPU memory (empty: none): per parameter, a
  // column of `instances` rows of `width` bytes (null: the argument comes
  // as above); per result, where its column goes (then `dest.results` is
  // left alone). The caller has finished writing the arguments.
  struct DeviceColumn {
    const void* data = nullptr;
    uint32_t width = 8;
  };
  std::vector<DeviceColumn> device_args;
  struct DeviceOut {
    void* data = nullptr;
    uint32_t width = 8;
  };
  std::vector<DeviceOut> device_results;

  // Set: several GPUs share this request's instances, each running the
  // whole request on its own thread and device. A device's wave loop takes
  // its waves from `claim` (up to `want` instances at *first, relative to
  // the request; 0 when none are left) and writes only their rows.
  std::function<uint32_t(uint32_t want, uint32_t* first)> claim;
  // Device memory this request plans with (GPUs it shares with other
  // requests at once); 0 = what is free.
  uint64_t memory_budget = 0;

  uint64_t fuel = 0;             // instructions per instance (back-edges and calls); 0 = unlimited
  double timeout_s = 0;          // stop the batch after this long; 0 = none
  uint32_t stack_slots = 384;    // 64-bit frame slots each instance owns
  uint32_t max_call_depth = 64;  // calls each instance owns records for
  // The whole stack's limits ("call stack exhausted" past them, as on the
  // CPU): the interpreter takes segments from a pool past what an instance
  // owns; compiled code's instances that run out of its CUDA stack run
  // again on the interpreter. 0 = the sizes above.
  uint32_t stack_slots_limit = 0;
  uint32_t call_depth_limit = 0;
  // While the batch runs: instances [first, end) of this request will not
  // change again (their results, traps and memory outputs are in `dest`).
  // Without `claim` the ranges come in order, each starting where the one
  // before ended.
  std::function<void(uint32_t first, uint32_t end)> final_rows;
  // The most device memory for stack segments; 0 = kStackPoolMaxBytes.
  uint64_t max_stack_pool_bytes = 0;
  uint32_t memory_pages = 0;  // linear-memory capacity per instance; 0 = automatic
  // False: memory.grow fails past memory_pages, where it would otherwise
  // run the instance again with more reserved (gpu_plan.h's
  // grows_past_reservation_rerun).
  bool grow_reruns = true;
  // Largest size a table may grow to (as StoreLimits::max_table_size on the
  // CPU: give both the same value for identical table.grow results);
  // 0 = the table's size plus kTableGrowRoom.
  uint32_t max_table_size = 0;
  // Auto: gpu_plan.h's choose_layout, for the interpreter kernel only
  // (compiled code is built for one layout: give it that one).
  MemoryLayout layout = MemoryLayout::Interleaved;
  uint32_t max_wave = 0;  // largest wave; 0 = as many as memory allows
  Tuning tuning;          // slices, stretches, the staging's size
  // Sparse, for tests: a cap on the pool (one that runs out) and the pool
  // the first wave gets (one that must grow); 0 = the plan's.
  uint64_t max_pool_bytes = 0;
  uint64_t first_pool_bytes = 0;
  // For tests: the first this many set-ups of the wave loop's buffers fail
  // as if the device had refused them (batch_run.cu plans them again).
  uint32_t refused_setups = 0;

  // What runs the instances: null for the built-in interpreter kernel, or
  // compiled code (load_compiled_kernel).
  std::shared_ptr<KernelLauncher> launcher;

  // Where per-instance outcomes go: all null = the returned RunResult's
  // vectors; all set = straight into the caller's arrays (`instances`
  // long), so that a huge batch is not held twice on the host.
  struct Destination {
    uint64_t* results = nullptr;  // instances x results
    uint8_t* traps = nullptr;
    uint32_t* trap_func = nullptr;
    uint32_t* trap_pc = nullptr;
    uint8_t* finished = nullptr;
    // traps, trap_func and trap_pc hold zeros already (a batch's fresh
    // columns): waves without a trap then leave them as they are, where
    // zeroing them again would be a large share of an 8.3M-instance batch.
    bool trap_words_zero = false;
    uint64_t* results_hi = nullptr;  // as results, v128 results' high words; null: not wanted
    // Instead of results, when every result is an i32 or an f32: 4 bytes a
    // value, which the device copies straight in when the column is pinned.
    uint32_t* results32 = nullptr;

    // The same columns from instance i on (nr results an instance).
    Destination from(uint64_t i, uint64_t nr) const {
      Destination d = *this;
      auto at = [](auto* p, uint64_t k) { return p ? p + k : p; };
      d.results = at(results, i * nr);
      d.results32 = at(results32, i * nr);
      d.results_hi = at(results_hi, i * nr);
      d.traps = at(traps, i);
      d.trap_func = at(trap_func, i);
      d.trap_pc = at(trap_pc, i);
      d.finished = at(finished, i);
      return d;
    }
  } dest;

  GpuBatch* batch = nullptr;  // the `gpu` intrinsics' shared state; may be null
  // Serves calls of imports that are no `gpu` intrinsic; null: such calls
  // trap (HostError).
  HostCallServer* host_calls = nullptr;
  // Per function import (empty: none): 0, or the stand-in for an import
  // nothing provides (kDevTrapImport: its calls trap with "unknown import
  // called"; kDevZeroImport: they return zeros), which the device answers
  // without the host.
  std::vector<uint8_t> unknown_imports;
  std::vector<MemIn> mem_in;
  std::vector<MemOut> mem_out;

  // Where the instances' initial state comes from: a fresh instantiation
  // (source_store == nullptr), or an existing instance whose memory,
  // globals and tables are copied (the spec runner's case); with
  // write_back, instance 0's final state is written back into it.
  Store* source_store = nullptr;
  uint32_t source_instance = 0;
  // The source instance is as instantiation left it (no start function or
  // call ran in it): its memory past the data segments is zeros.
  bool source_fresh = false;
  bool write_back = false;

  // Set to stop: no further wave starts (the one running finishes).
  const std::atomic<bool>* cancel = nullptr;
  // Called from the host thread about twice a second while a wave runs.
  std::function<void(uint64_t done, uint64_t total, double seconds)> progress;
  // Called once the batch is planned, before anything is launched.
  std::function<void(const BatchPlan& plan, const std::string& device)> on_plan;
};

struct RunResult {
  std::vector<ValType> result_types;
  std::vector<uint64_t> results;     // instances x result_types.size()
  std::vector<uint64_t> results_hi;  // as results, v128 results' high words (empty without v128 results)
  std::vector<uint8_t> traps;        // TrapCode per instance
  std::vector<uint32_t> trap_func;   // module function index where it trapped
  std::vector<uint32_t> trap_pc;     // bytecode word offset in that function, or kNoTrapPc
  std::vector<uint8_t> finished;     // 0 when the timeout stopped the instance
  BatchPlan plan;
  std::string device_name;
  std::string tier;  // the launcher's tier_name()
  double setup_ms = 0, kernel_ms = 0, total_ms = 0;
  // Sparse: the most pool bytes a wave used, and that wave's instances;
  // instances that ran out of the pool and ran again in a later wave.
  uint64_t pool_bytes_used = 0;
  uint32_t pool_wave_instances = 0;
  uint64_t pool_reruns = 0;
  // Plans made again, each with an eighth less memory, after the device
  // refused a wave loop's buffers.
  uint32_t replans = 0;
  // The most slices a wave ran in (wave_slices.cu; 1: every wave in one launch).
  uint32_t wave_slices = 1;
  // Results that came down while their wave's kernel still ran
  // (wave_stream.cu), and those the kernel wrote into the host's column.
  uint64_t streamed_rows = 0, mapped_rows = 0;
  bool canvas_mapped = false;  // the kernels drew straight on the host's canvas
  // Instances compiled code ran out of CUDA stack for, run again on the
  // interpreter kernel (their host calls and output are counted above).
  uint64_t stack_reruns = 0;
  // Instances that grew their memory past the pages reserved for them and
  // ran again with more (batch_run.cu's rerun_grown).
  uint64_t grow_reruns = 0;
  // Instances whose trap the device counted (WaveLoop::wave_trapped()).
  uint64_t trapped_counted = 0;
  // The interpreter's pool of call stack segments at its largest (0: none
  // was needed).
  uint64_t stack_pool_bytes = 0;
  // Wall time per phase, the device synchronised at each phase's end.
  double plan_ms = 0, upload_ms = 0, memory_setup_ms = 0, download_ms = 0;
  // Host calls: served, passes that served them (each a relaunch of its
  // wave), memory rounds (fetches of guest bytes), and their wall time.
  uint64_t host_calls = 0, host_passes = 0, host_fetch_rounds = 0;
  double host_ms = 0;
  // WASI output collected on the device: bytes, and the times the host
  // took them (between launches).
  uint64_t device_output_bytes = 0, device_log_drains = 0;
  // Read-only files the device held for the batch, and their bytes.
  uint64_t device_files = 0, device_file_bytes = 0;
};

}  // namespace ww::gpu
