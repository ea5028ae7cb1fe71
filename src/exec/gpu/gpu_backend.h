// Public host API of the GPU backend: run one export of a module as a batch
// of many independent instances, one per GPU thread. Plain C++ (no CUDA
// types), so the CLI and the spec runner include it whether or not this
// build has CUDA; without CUDA every entry point reports that clearly.
//
// The program is data: the kernel is compiled once with the project and
// interprets the module's register bytecode, so a new module starts running
// with no compilation at all.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/guest_memory.h"
#include "common/result.h"
#include "exec/gpu/plan/memory_layout.h"
#include "exec/gpu/tuning.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/runtime.h"
#include "wasi/wasi_numbers.h"

namespace ww::gpu {

class KernelLauncher;  // exec/gpu/kernel_launcher.cuh

// trap_pc of a trap that no code raised (a memory input that did not fit).
inline constexpr uint32_t kNoTrapPc = ~0u;

struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string name;
  int sm_count = 0;
  uint64_t resident_threads = 0;  // threads the device runs at once (SMs x threads per SM)
  int cc_major = 0, cc_minor = 0;
  uint64_t total_bytes = 0, free_bytes = 0;
  uint64_t idle_block_bytes = 0;  // the device block kept between batches (counted free)
};
// The calling thread's GPU (use_device). Never fails: a machine without
// a driver or a GPU, or a build without CUDA, gives available = false and
// a one-line reason.
DeviceInfo probe_device();
bool built_with_cuda();
// GPUs this process sees (CUDA_VISIBLE_DEVICES applies); 0 without any.
int device_count();
// Makes GPU `ordinal` the calling thread's: its batches, buffers and
// compiled code's loaded modules go there. Threads start on GPU 0.
Status use_device(int ordinal);
int current_device();
// The calling thread on `ordinal` until the scope ends, then back where
// it was.
class DeviceScope {
 public:
  explicit DeviceScope(int ordinal) : before_(current_device()), status_(use_device(ordinal)) {}
  ~DeviceScope() { (void)use_device(before_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  [[nodiscard]] const Status& status() const { return status_; }

 private:
  int before_;
  Status status_;
};
// Pins the host buffers batches copy through (the staging, at the
// tuning's size), ahead of the first batch: the GPU's start-up thread
// calls it while the inputs are read, after warm_idle_block and before
// load_kernels.
void prepare_transfers(const Tuning& tuning);
// Buffers smaller than this cross through the staging: their copies are
// short, and each registration is a system call.
inline constexpr uint64_t kHostPinMinBytes = uint64_t(4) << 20;
// Registered by the start-up, behind the CUDA context's hundreds of ms, a
// smaller buffer costs the batch nothing: thread-id's 1M results (4 MB)
// then come down without the staging.
inline constexpr uint64_t kStartUpPinMinBytes = uint64_t(1) << 20;
// Host memory the GPU copies to and from directly instead of through the
// pinned staging pieces: `bytes` at `p`, registered with CUDA (page-locked)
// by the GPU's start-up once its staging is pinned, or at once when the
// start-up is past that. The staging's host copies moved 30-40 GB/s of a
// hash-wasm batch's 96 MB; registering huge-page memory costs 0.02-0.03 ms
// per MiB (bench/RESULTS.md). Buffers under kHostPinMinBytes are left to
// the staging. One request per buffer; release_host_pin unregisters it
// and must come before the memory is freed.
void request_host_pin(const void* p, uint64_t bytes);
// The same, from kStartUpPinMinBytes, only while the start-up has not
// pinned yet (so that it hides the registration); false, and nothing
// requested, after.
bool request_host_pin_at_start_up(const void* p, uint64_t bytes);
void release_host_pin(const void* p);
// Whether all of [p, p + bytes) lies in registered memory.
bool host_range_pinned(const void* p, uint64_t bytes);
// Where a kernel of the current GPU writes `bytes` at `p` straight into
// host memory: `p` itself or its mapping, when the range is pinned
// (host_range_pinned); null otherwise.
void* pinned_for_kernels(void* p, uint64_t bytes);
// Registers what was requested so far; later requests register at once.
void pin_requested_host_ranges();
// A request_host_pin released when it goes (before the memory it names).
class HostPin {
 public:
  HostPin(const void* p, uint64_t bytes) : p_(p) { request_host_pin(p, bytes); }
  // request_host_pin_at_start_up's: empty() when it came too late.
  struct AtStartUp {};
  HostPin(AtStartUp, const void* p, uint64_t bytes) : p_(request_host_pin_at_start_up(p, bytes) ? p : nullptr) {}
  bool empty() const { return p_ == nullptr; }
  HostPin(HostPin&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  HostPin(const HostPin&) = delete;
  HostPin& operator=(const HostPin&) = delete;
  HostPin& operator=(HostPin&&) = delete;
  ~HostPin() {
    if (p_) release_host_pin(p_);
  }

 private:
  const void* p_;
};

// A block of device memory held whole (see take_idle_block).
struct DeviceBlock {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// The GPU's idle block: the start-up allocates one (prepare_transfers)
// while the inputs are read, and an arena's reserved block comes back to
// it when none is held, so that a wave's block costs no cudaMalloc (whose
// cost is the same for any size up to 4 GiB: bench/scale/alloc_cost.cu).
// A plan counts it as free memory (probe_device).
// Takes it when it holds `bytes`; otherwise returns an empty block and
// leaves it idle.
DeviceBlock take_idle_block(size_t bytes);
// Frees the current GPU's idle block, for a block the memory beside it
// cannot hold (its plan counted the idle block as free).
void free_idle_block();
// Allocates the current GPU's idle block when it holds none.
void warm_idle_block();
// The current GPU's idle block's bytes (0: none).
uint64_t idle_block_bytes();
// The current GPU's CUDA stack a thread, as the driver holds it: raised
// while launchers of recursive compiled code live (compiled_launcher.cu).
uint64_t cuda_stack_bytes();
// Returns once every background free (DeviceArena::release_in_background)
// has finished: before reading the device's free memory or planning the
// next batch.
void wait_for_background_frees();

// Loads the kernels every batch launches, and with `interpreter` the
// interpreter's (CUDA loads a kernel lazily, at its first launch): the
// GPU's start-up calls it while the module and the inputs are read.
void load_kernels(bool interpreter);
// Drops `object` (compiled code holding a loaded module, a finished
// wave loop) on the thread that frees finished batches' device
// memory, after those frees, with the calling thread's GPU selected:
// unloading a module waits for them, and the caller has outputs to write
// meanwhile.
void retire_in_background(std::shared_ptr<void> object);
// GPU memory of `bytes` bytes, freed when the last owner goes (for
// results that stay on the device).
Result<std::shared_ptr<void>> device_buffer(uint64_t bytes);
// Waits for all work on the device (arrays another library wrote).
Status device_synchronize();

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

// A read-only file whose reads the device serves (dev_wasi_files.cuh).
struct DeviceFile {
  const uint8_t* bytes = nullptr;
  uint64_t size = 0;
  uint64_t max_seek = 0;                       // the largest offset lseek allows on its file system
  uint8_t filestat[wasi::kFilestatSize] = {};  // fd_filestat_get's bytes
  uint8_t fdstat[wasi::kFdstatSize] = {};      // fd_fdstat_get's
};

// The device's file table, filled as the host's calls open files. A batch
// may run in several launches of the wave loop (instances run again with
// larger stacks), each with a table of its own.
class DeviceFiles {
 public:
  virtual ~DeviceFiles() = default;
  // Unique to this table in the process: a server remembers what it
  // uploaded to which table.
  virtual uint64_t table_id() const = 0;
  // Copies `f` to the device once for the batch: its id, or -1 when the
  // device has no room left (the host keeps serving that file). Safe to
  // call from the host's workers.
  virtual int32_t upload(const DeviceFile& f) = 0;
};

// A call of an import the host serves (BatchRequest::host_calls): the
// instance left its kernel at the call and resumes there once served.
struct HostCall {
  uint32_t instance = 0;  // in the batch
  uint32_t func = 0;      // the import's function index (past them: foreign_func's)
  // A call through a table of another instance's function: its store
  // address (its type matched the call's on the device); else -1.
  int64_t foreign_func = -1;
  uint64_t* io = nullptr;          // arguments in, results out
  GuestMemory* memory = nullptr;   // the instance's memory 0, or null
  TrapCode trap = TrapCode::None;  // set to end the instance with this trap
  // When the device may hold files (DeviceWasi::file_budget): the table,
  // and what the call gave the device, descriptor `fd` of file `file` in
  // the instance's slot `fd_slot` (< kDevFdSlots; -1: nothing).
  DeviceFiles* files = nullptr;
  int32_t fd_slot = -1;
  uint32_t fd = 0, file = 0;
};

// The WASI calls a server lets the device serve itself (dev_wasi.cuh),
// and what they need: so that an ordinary program's arguments, clock,
// random bytes, exit and stdout cost no trip to the host.
struct DeviceWasi {
  // Per imported function: a DevWasiCall id (dev_wasi_ids.h), or 0xFF
  // for the host.
  std::vector<uint8_t> calls;
  // argv (0xFF bytes stand for the instance's index in decimal) and the
  // environment: the strings one after another, without their NULs.
  std::vector<uint8_t> argv, env;
  std::vector<uint32_t> argv_off, env_off;      // count + 1 offsets
  bool log_stdout = false, log_stderr = false;  // fd 1 / fd 2 writes collected on the device
  uint64_t out_cap = ~uint64_t{0};              // bytes each of them may take
  uint64_t seed = 0;                            // random_get: SplitMix64 of seed + instance
  int64_t clock_base[4] = {};                   // the host's clocks (ns) when the batch starts
  uint64_t clock_res[4] = {};
  // fd_fdstat_get of fds 0-2, the same for every instance of the batch
  // (valid when stdio_fdstat_known).
  bool stdio_fdstat_known = false;
  uint8_t stdio_fdstat[3][wasi::kFdstatSize] = {};
  // The preopens' guest names (fd_prestat_*), as argv.
  std::vector<uint8_t> preopen_names;
  std::vector<uint32_t> preopen_off{0};
  // Device memory the server's files may take (0: the device holds none).
  uint64_t file_budget = 0;
};

class HostCallServer {
 public:
  virtual ~HostCallServer() = default;
  // The calls the device may serve (null: none); read once per batch.
  virtual const DeviceWasi* device_wasi() { return nullptr; }
  // What instance `instance` wrote to fd (1 or 2) on the device, in the
  // order it wrote it; before any of its calls that follow the writes.
  virtual void device_output(uint32_t instance, uint32_t fd, const uint8_t* bytes, size_t n) {}
  // Instance `instance` called proc_exit(code) on the device.
  virtual void device_exit(uint32_t instance, uint32_t code) {}
  // Instances [first, first + n) of the batch start from the beginning (a
  // wave, or one that runs again after the pool ran out): what was kept
  // for them goes.
  virtual void begin(uint32_t first, uint32_t n) {}
  // Serves one call. Calls of different instances may run at once on the
  // host's workers (unless `parallel` is false); one instance's calls come
  // in order. A call whose memory->read gave null is served again with the
  // same arguments once those bytes are fetched, so it must not have acted
  // on anything before it had read all it needs.
  virtual void serve(HostCall& call) = 0;
  virtual bool parallel() const { return true; }
};

struct BatchPlan {
  MemoryLayout layout = MemoryLayout::Interleaved;  // never Auto
  // Dense layouts: the memory capacity; sparse: the pool bytes the plan
  // expects an instance to take (measured ones are in BatchResult).
  uint64_t linear_bytes_per_instance = 0;
  uint64_t overhead_bytes_per_instance = 0;  // frames, call records, globals, tables, status
  uint32_t memory_pages = 0;                 // capacity (reserved, for sparse)
  // Sparse: bytes of one instance's part of a chunk, and the pool.
  uint32_t chunk_shift = 0;
  uint64_t pool_bytes = 0;      // the pool the first wave gets
  uint64_t pool_bytes_max = 0;  // what it may grow to when a wave runs out
  // Sparse memory nothing writes: every group reads one chunk table of
  // zeros (a table per group was 256 bytes of each instance's 302 for a
  // Rust module's 16 pages, and zeroing it 0.6 ms of 10M instances).
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

  // Where per-instance outcomes go: all null = the returned BatchResult's
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
    // zeroing them again was a tenth of an 8.3M-instance batch.
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

struct BatchResult {
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

// ---------------------------------------------------------------- NVRTC

// The NVRTC library's version ("13.0"), loaded with dlopen on first use;
// errors say why it cannot be loaded (not installed, built without CUDA).
Result<std::string> nvrtc_version();
// The options compiled GPU code is built with for a device of compute
// capability major.minor: its real architecture, exact float semantics.
std::vector<std::string> nvrtc_options(int cc_major, int cc_minor);
// Compiles CUDA C++ translation units to one CUBIN: one unit whole, or
// several as relocatable code, compiled in parallel and linked with
// nvJitLink. The result is the CUBIN followed by 4 bytes (little-endian):
// the largest stack frame ptxas reported (low 16 bits) and the kernel's
// and the chain function's (high 16), which load_compiled_kernel reads.
// Errors carry NVRTC's first error line.
Result<std::vector<uint8_t>> nvrtc_compile(const std::vector<std::string>& units, const std::string& name, int cc_major,
                                           int cc_minor);
// Links relocatable CUBINs into one (nvJitLink, loaded with dlopen).
Result<std::vector<uint8_t>> link_cubins(const std::vector<std::vector<uint8_t>>& objects, int cc_major, int cc_minor);
// Loads a CUBIN through the driver API and returns the launcher of its
// kernel `kernel` (which takes the interpreter kernel's parameters).
// `recursive`: the code recurses, so the CUDA stack is sized for the
// batch's call depth. `leave_words`: codegen::Generated's, for code whose
// calls may leave for the host. `background`: the load runs on a thread
// of its own, which the first use waits for.
Result<std::shared_ptr<KernelLauncher>> load_compiled_kernel(const std::vector<uint8_t>& cubin,
                                                             const std::string& kernel, bool recursive,
                                                             uint64_t leave_words = 0, bool background = true);

// Instances that stay on the device between calls: their memories,
// globals and tables as the last call left them. Each call runs an export
// (and a chain after it) on every instance; an instance that trapped keeps
// its trap and is skipped. Only what a call asks for comes back.
class ResidentBatch {
 public:
  virtual ~ResidentBatch() = default;
  virtual uint32_t instances() const = 0;
  virtual const BatchPlan& plan() const = 0;
  virtual const std::string& device_name() const = 0;
  // Runs `call`'s export on every instance: its func_index, arguments,
  // chain (then, launch_per_call), fuel, timeout_s, cancel, mem_in,
  // mem_out and progress; the rest stays the batch's. The result's
  // kernel_ms and phases are this call's.
  virtual Result<BatchResult> call(const BatchRequest& call) = 0;
  // `len` bytes at `addr` of every instance into `out` (instances x len;
  // zeros for an instance that trapped), and `record` bytes per instance
  // from `data` written there. A range past an instance's memory is an
  // error (nothing is read or written).
  virtual Status read_memory(uint64_t addr, uint64_t len, uint8_t* out) = 0;
  virtual Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data) = 0;
};
// `req`: the module, instances, launcher (null: the interpreter), layout,
// stacks, memory pages and source instance as for run_batch; its export
// and arguments are unused. Errors when the instances do not fit the
// device at once, or the module's imports need the host.
Result<std::unique_ptr<ResidentBatch>> make_resident(const BatchRequest& req);

// Errors: no GPU / no CUDA, an import that cannot run on the GPU (only
// `gpu.*` intrinsics can), a request that cannot fit the device memory, a
// CUDA failure (named with the call that failed).
Result<BatchResult> run_batch(const BatchRequest& req);

}  // namespace ww::gpu
