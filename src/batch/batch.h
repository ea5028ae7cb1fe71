// The batch engine: one export of one module run as N independent
// instances, each with its own arguments and memory inputs, on the CPU or
// the GPU, interpreted or compiled. The command line only parses options
// into a BatchSpec and writes a BatchResult out; everything between is here.
//
//   run(spec) -> choose the backend (GPU when usable) and the tier (the
//   interpreter, or code compiled from the module: from the cache, or in
//   the background while the first instances run interpreted) -> run the
//   instances in segments through executors (batch/executor.h) -> results,
//   traps and memory outputs in instance order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "batch/host_imports.h"
#include "cache/code_cache.h"
#include "common/host_column.h"
#include "common/result.h"
#include "exec/gpu/plan/memory_layout.h"
#include "exec/gpu/tuning.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/runtime.h"
#include "wasi/wasi.h"

namespace ww::batch {

enum class Backend : uint8_t { Auto, Cpu, Gpu };
enum class Tier : uint8_t { Auto, Interp, Compiled };
const char* backend_name(Backend b);
const char* tier_name(Tier t);

// Where argument k of each instance comes from.
struct ArgSource {
  enum Kind { Const, Index, Column, DeviceColumn } kind = Const;
  Value value;  // Const
  // Column: row i's raw bits for instance i (i32 and f32 in the low half),
  // the caller's until run() returns.
  std::span<const uint64_t> column;
  // DeviceColumn: row i for instance i in GPU memory, 4 or 8 bytes a row
  // as the parameter's type (the GPU backend only; nothing crosses to the host).
  const void* device = nullptr;
};
// Bytes a value of type t takes in a column (device arrays, results left
// on the GPU): i32 and f32 4, the rest 8.
inline uint32_t column_width(ValType t) { return t == ValType::I32 || t == ValType::F32 ? 4 : 8; }

// Argument of row `row`, whose instance index is `index`: the constant, the
// index converted to `type`, or the column's row.
Value arg_value(const ArgSource& a, ValType type, uint64_t row, uint64_t index);

// A memory address: a number, or an export (a () -> i32 function or an i32
// global) read per instance.
struct Address {
  uint64_t addr = 0;
  std::string export_name;
  bool is_global = false;
};

// Record i of `bytes` is written at `addr` in instance i's memory 0 before
// the call. The bytes are the caller's, alive until run() returns: a 1 GB
// input is not copied again on its way in.
struct MemInput {
  Address addr;
  uint64_t record = 0;
  std::span<const uint8_t> bytes;
};
// `length` bytes at `addr` are read from each instance's memory 0 after
// the call (zeros for trapped instances).
struct MemOutput {
  Address addr;
  uint64_t length = 0;
};

struct GpuOptions {
  MemoryLayout layout = MemoryLayout::Auto;
  // Frames and slots every instance starts with; past them the GPU
  // interpreter takes stack segments from a pool, up to the limits (by
  // default the CPU backend's).
  uint32_t stack_slots = 384;  // interpreter frame slots per instance
  uint32_t call_depth = 64;    // frames per instance
  uint32_t stack_slots_limit = StoreLimits{}.stack_slots;
  uint32_t call_depth_limit = StoreLimits{}.max_call_depth;
  uint32_t memory_pages = 0;  // linear-memory capacity; 0 = automatic
  uint32_t max_wave = 0;      // 0 = as many as memory allows
  // Chained calls (BatchSpec::then): one launch per call instead of one
  // for the whole chain (bench/chain/run.sh compares them).
  bool launch_per_call = false;
  // The GPUs a batch runs on: their ordinals (one listed twice is shared,
  // each taking part of its memory), or empty for every visible one, at
  // most max_devices of them (0: no limit).
  std::vector<int> devices;
  unsigned max_devices = 0;
  // Slices, stretches, the staging, host workers, wave loops per GPU.
  GpuTuning tuning;
  // The part of each GPU's free memory this process plans with (MPI ranks
  // sharing GPUs).
  double memory_share = 1;
};

// A batch of WASI commands (modules importing wasi_snapshot_preview1, run
// through `_start`): what each instance's argv, stdio and random bytes
// are. Its result is the exit code.
struct WasiBatch {
  wasi::Config config;            // environment and preopens
  std::string argv0;              // the module's path
  std::vector<std::string> args;  // "@index" in them stands for the instance's index
  // "{i}" stands for the index. stdout and stderr without a pattern are
  // collected per instance (BatchResult::stdout_blocks); stdin without one
  // is empty.
  std::string stdout_pattern, stderr_pattern, stdin_pattern;
  uint64_t seed = 0;                         // random_get: instance i draws from seed + i
  uint64_t output_cap = uint64_t(64) << 20;  // bytes of stdout, and of stderr, per instance
};

struct BatchResult;
class Resident;

struct BatchSpec {
  std::shared_ptr<const CompiledModule> module;
  std::shared_ptr<const WasiBatch> wasi;  // set: the module is a WASI command
  // For a module that is no WASI command: the directories its gpu.read_file
  // and gpu.write_file reach (config.preopens; argv and stdio unused).
  std::shared_ptr<const WasiBatch> files;
  std::string export_name;  // empty: _start
  uint64_t instances = 1;
  // This batch as instances [index_base, index_base + instances) of one of
  // total_instances (0: instances), a share of it (MPI ranks): what an
  // instance sees of its index (@index, gpu.thread_id, gpu.instance_count,
  // host functions' instance, WASI's @index, {i} and random seed) is the
  // whole batch's; argument columns, memory inputs and the results are
  // this batch's rows.
  uint64_t index_base = 0;
  uint64_t total_instances = 0;
  uint64_t total() const { return total_instances ? total_instances : instances; }
  std::vector<ArgSource> args;  // one per parameter of the export
  std::vector<MemInput> mem_in;
  std::vector<MemOutput> mem_out;
  // Exports run once, in order, in one instance whose state (with the
  // start function's work) then seeds every instance of the batch.
  struct InitCall {
    std::string export_name;
    std::vector<Value> args;
  };
  std::vector<InitCall> init_calls;
  // Calls after the export, on the same instances (their memories and
  // globals as the call before left them), in order, each `repeat` times:
  // init, then step k times, then a read-out. The batch's results are the
  // last call's; an instance that traps stops there and reports that trap.
  // The GPU runs the whole chain in one launch per wave.
  struct ThenCall {
    std::string export_name;
    uint64_t repeat = 1;
    std::vector<ArgSource> args;  // Const or Index (the same for every repetition)
  };
  std::vector<ThenCall> then;

  // Imports the embedder serves (on the GPU, instances leave their kernel
  // for them and resume once served).
  HostFunctions host_functions;
  // Function imports nothing provides: an error (before anything runs), or
  // stand-ins whose calls trap naming the import or return zeros, on every
  // backend and tier (the GPU answers them on the device).
  UnknownImports unknown_imports = UnknownImports::Error;
  // Set: the instances are these resident ones (start_resident made
  // them, `instances` is their count), as the batch before left them.
  Resident* resident = nullptr;

  uint64_t fuel = 0;                           // per instance: back-edges and calls; 0 = unlimited
  double timeout_s = 0;                        // stop handing out instances (CPU) / stop kernels (GPU)
  unsigned threads = 0;                        // CPU workers; 0 = every core
  intrinsics::GpuBatch* intrinsics = nullptr;  // the `gpu` import module's shared state

  Backend backend = Backend::Auto;
  Tier tier = Tier::Auto;
  // Tier::Auto: how long a batch that ends before its background compile
  // waits for it, so that the cache gets the code; then the compile goes
  // on beside the caller (compiles_running). Negative: until it ends.
  double compile_wait_s = -1;
  GpuOptions gpu;
  CacheOptions cache;

  // Set (from a signal handler, say) to stop the batch: running instances
  // stop as at the timeout and are reported "not finished: interrupted".
  const std::atomic<bool>* cancel = nullptr;

  // About twice a second while instances run: done of total, seconds.
  std::function<void(uint64_t done, uint64_t total, double seconds)> progress;
  // While the batch runs: the rows (results, traps, memory outputs) of
  // instances [0, ready) of `r` will not change again, so they may be
  // written out. `r` is the batch's result, its columns sized before the
  // first call and never moved; called from the batch's own threads with
  // `ready` only growing.
  std::function<void(const BatchResult& r, uint64_t ready)> on_ready;
  // GPU only: result k of instance i goes to device_results[k] (GPU
  // memory, 4 or 8 bytes a row as the result's type) instead of to the
  // host; BatchResult::results then stays zeros.
  std::vector<void*> device_results;
  // Lines worth showing before the run (the GPU memory plan).
  std::function<void(const std::string& line)> note;
};

// One GPU's part of a batch run on several.
struct GpuShare {
  int device = 0;  // ordinal
  std::string name;
  uint64_t instances = 0;
  double seconds = 0;  // its wall time
  double kernel_ms = 0;
};

// A stretch of instances that ran one way (the summary lists them).
struct Segment {
  uint64_t first = 0, count = 0;
  Backend backend = Backend::Cpu;
  Tier tier = Tier::Interp;
  double seconds = 0;
};

// What happened to the compiled tier in this batch.
struct CompileReport {
  bool attempted = false;
  bool used = false;  // compiled code ran at least one segment
  bool cache_hit = false;
  double generate_ms = 0;  // codegen
  double compile_ms = 0;   // host compiler or NVRTC (0 on a cache hit)
  double load_ms = 0;      // dlopen / module load
  std::string fallback;    // why compiled code did not run (the interpreter did, or nothing: an interrupt), one line
  std::string cache_note;  // cache trouble that did not stop the run
  // The batch ended before its background compile and stopped waiting for
  // it (BatchSpec::compile_wait_s): the compile goes on (compiles_running).
  bool left_running = false;
  // Tier-up (compiled/tier_up.h): the auto tier on the CPU for a small
  // batch or a large module, hot functions compiled while it ran.
  struct TierUp {
    bool on = false;
    uint32_t hot = 0, compiled = 0, units = 0, cache_hits = 0, failed = 0;
    double compile_s = 0;
    std::string error;  // the first unit that failed
  } tier_up;
};

// Where a batch's time went, milliseconds of wall time. The GPU's phases
// are the host's time between a wave's steps, the device's (events) where
// the host queued a step without waiting for it; the CPU's split each
// executor's wall time by its workers' summed time per phase, and its
// memory set-up holds the result columns' set-up too.
struct PhaseTimes {
  double read_inputs = 0;    // module file, argument columns, memory inputs (the CLI)
  double translate = 0;      // decode, validate, translate (the CLI)
  double compile = 0;        // codegen + compiler + load, when the batch waited for it
  double plan = 0;           // device probe, initial image, memory plan
  double upload = 0;         // module, arguments and memory inputs to the device
  double memory_setup = 0;   // instances' initial state (GPU kernels; CPU instantiation)
  double kernel = 0;         // running the export
  double download = 0;       // results, traps and memory outputs back
  double write_outputs = 0;  // --output, --mem-out and the rest (the CLI)
  // GPU: serving the calls instances left their kernels for (WASI, host
  // functions), between the launches that resume them; inside `kernel`.
  double host_calls = 0;
  // Starting the CUDA driver and context (warm_up_gpu overlaps it with the
  // phases before it; `plan` then counts only what was left of it).
  double gpu_startup = 0;
};

struct BatchResult {
  FuncType type;
  std::vector<std::string> result_names;  // empty: result0, result1, ...
  // WASI batches: each instance's stdout and stderr (without --stdout /
  // --stderr patterns), written in instance order after the batch.
  std::vector<std::string> stdout_blocks, stderr_blocks;
  uint64_t output_capped = 0;  // instances whose output was cut at the cap
  // GPU: calls served on the host, and the passes that served them (each
  // one more launch of its wave).
  uint64_t host_calls = 0, host_passes = 0;
  uint64_t device_output_bytes = 0;                  // WASI output collected on the GPU, not by host calls
  uint64_t device_files = 0, device_file_bytes = 0;  // read-only files whose reads the GPU served
  uint64_t first_output_capped = ~uint64_t{0};       // the first of them
  // instances x type.results.size(), raw bits; empty when results32 holds them.
  Column<uint64_t> results;
  // The results when every one is an i32 or an f32 (all_32bit): 4
  // bytes a value, as the GPU packs them, so that its kernel writes them
  // straight into this column, where widening them on the host would take
  // longer than their crossing (thread-id's 40 MB), and a 100M batch holds
  // half the memory.
  Column<uint32_t> results32;
  Column<uint64_t> results_hi;  // as results, v128 results' high words (empty without v128 results)
  Column<uint8_t> traps;        // TrapCode per instance
  // Where each trap happened: module function index and bytecode word
  // offset in it; trap_pc is kNoTrapPc for traps outside the code (a
  // memory input that did not fit, the timeout).
  Column<uint32_t> trap_func, trap_pc;
  Column<uint8_t> finished;              // 0 for instances the timeout stopped or skipped
  std::vector<Column<uint8_t>> mem_out;  // per MemOutput: instances x length
  // Large mem_out and results32 columns, pinned for the GPU to copy and
  // write into (released before the columns go: declared after them).
  std::vector<std::shared_ptr<void>> pins;

  Backend backend = Backend::Cpu;
  std::string backend_note;  // why not the GPU, when auto chose the CPU
  std::string device;        // the GPU's name
  // A batch on several GPUs: each one's part (empty on one GPU). Its phase
  // times and kernel_ms are then the GPUs' average.
  std::vector<GpuShare> gpus;
  unsigned threads = 0;  // CPU workers
  double kernel_ms = 0;  // GPU kernels, all segments
  PhaseTimes phases;
  // The GPU's memory: what each instance was given (linear memory plus
  // frames, globals, tables and status) and how the waves were cut. With
  // sparse memory, linear bytes are what instances took from the pool
  // (measured) out of the reserved capacity.
  uint64_t device_bytes_per_instance = 0;
  uint64_t linear_bytes_per_instance = 0;
  uint64_t reserved_bytes_per_instance = 0;
  uint64_t pool_reruns = 0;       // instances that ran out of the pool and ran again
  uint64_t replans = 0;           // plans made again with less memory after the GPU refused a wave's buffers
  uint64_t stack_reruns = 0;      // compiled code's instances that ran out of CUDA stack, run again interpreted
  uint64_t grow_reruns = 0;       // instances whose memory grew past the GPU's reservation, run again with more
  uint64_t stack_pool_bytes = 0;  // the GPU interpreter's call stack segments, at the most
  uint32_t wave_size = 0, waves = 0;
  MemoryLayout memory_layout = MemoryLayout::Auto;  // the GPU's (Auto: none ran)
  std::vector<Segment> segments;
  CompileReport compile;
  double wall_s = 0;

  // Result k of instance i, raw bits.
  uint64_t result_bits(uint64_t i, size_t k) const {
    const size_t nr = type.results.size();
    return results32.empty() ? results[i * nr + k] : results32[i * nr + k];
  }
  void set_result_bits(uint64_t i, size_t k, uint64_t bits) {
    const size_t nr = type.results.size();
    if (results32.empty()) results[i * nr + k] = bits;
    else results32[i * nr + k] = uint32_t(bits);
  }
};

// The type of exported function `name`, or "unknown export 'f' (exported
// functions: a, b)" / "export 'm' is a memory, not a function".
Result<FuncType> export_function_type(const Module& m, const std::string& name, uint32_t* func_index = nullptr);

// Starts the GPU's driver and context in the background (a long wait on a
// cold machine) while the caller reads the module and inputs; run()
// waits for it instead of starting them itself: for the context first,
// then, having looked up and loaded cached compiled code meanwhile, for
// the pinned staging and the kernels. Unless `tier` is the interpreter,
// NVRTC is loaded alongside (its version is part of the compiled-code
// cache's key); unless it is compiled code, the interpreter's kernels are
// loaded too. The GPUs `gpus` selects start their contexts too (the first
// on the caller's thread's GPU 0, the rest alongside), with its tuning's
// staging.
void warm_up_gpu(Tier tier, const GpuOptions& gpus = {});
// Returns once the warm-up (if one started) has finished.
void wait_for_warm_up();

// Checks the spec against the module (the export, the argument count, the
// imports, memory I/O on a module without memory), runs it, and returns
// the per-instance outcome. Errors are input errors ("unknown export 'f'
// (exported functions: a, b)") or a backend that cannot run at all (no
// GPU for Backend::Gpu); a trap is never an error.
Result<BatchResult> run(const BatchSpec& spec);
// Makes `r`'s instances for `spec`'s module (its backend, tier, GPU and
// cache options; export and arguments unused): the backend and tier are
// chosen as run() chooses them, with code compiled for every export.
Status start_resident(const BatchSpec& spec, Resident& r);

// Whether compiles that batches stopped waiting for are still running
// (their code reaches the cache when they end). A process that returns
// from main() waits for them.
bool compiles_running();
// Ends the process at once with `status`, not waiting for those compiles:
// host compilers are killed, a cache entry being written is finished and
// no other starts. For a program's last step, its outputs closed.
[[noreturn]] void exit_stopping_compiles(int status);

}  // namespace ww::batch
