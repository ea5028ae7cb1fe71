// wasmwarp's public C++ API: load a WebAssembly module once, then call one
// of its exports on many instances at once (one instance per argument row),
// on the CPU or the GPU, and get every instance's results and traps back as
// arrays. Errors are values carrying the message the command line tool
// prints; nothing here exits or throws.
//
// This header includes only the standard library (C++20).
//
//   auto m = wasmwarp::Module::from_file("collatz.wasm");
//   if (!m) { std::cerr << m.error().message << "\n"; return 1; }
//   wasmwarp::Engine engine({.backend = wasmwarp::Backend::Cpu});
//   std::vector<int64_t> start = ...;  // one row per instance
//   auto r = engine.call(*m, "collatz_steps", start.size(), {wasmwarp::Arg::column(start)});
//   for (uint64_t i = 0; i < r->instances(); ++i)
//     if (!r->trapped(i)) use(r->i64(i));
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace wasmwarp {

enum class ValueType : uint8_t { I32, I64, F32, F64, V128, FuncRef, ExternRef };
// "i32", "funcref", ...
const char* type_name(ValueType t);

// What went wrong, in the words the command line tool prints.
struct Error {
  std::string message;
};

// Trap codes (CallResult::trap_codes) of instances that did not finish:
// the timeout stopped them, or a cancel.
inline constexpr uint8_t kTrapTimeout = 12;
inline constexpr uint8_t kTrapInterrupted = 16;
// The trap code of a call of an import nothing provides, with
// UnknownImports::Trap; its trap_function is the import, which its
// message names ("unknown import called: env.foo").
inline constexpr uint8_t kTrapUnknownImport = 21;
// CallResult::trap_offset of a trap raised outside the module's code (a
// memory input that did not fit, the timeout, an unknown import).
inline constexpr uint32_t kNoTrapOffset = ~0u;

// A value or the Error that stands in its place.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error e) : v_(std::move(e)) {}      // NOLINT: implicit by design
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // The value; only when ok().
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // The error; only when !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct FunctionType {
  std::vector<ValueType> params, results;
};
// "i32, f64"
std::string type_list(const std::vector<ValueType>& types);
// "(i32, i64) -> (f64)"
std::string to_string(const FunctionType& t);

enum class ExternKind : uint8_t { Function, Table, Memory, Global };

struct Export {
  std::string name;
  ExternKind kind = ExternKind::Function;
  FunctionType type;  // functions only
};

struct Import {
  std::string module, name;
  ExternKind kind = ExternKind::Function;
  FunctionType type;  // functions only
};

struct ModuleOptions {
  // Refuse modules whose call graph has a cycle ("recursion not
  // supported: functions F, G form a cycle").
  bool deny_recursion = false;
};

// Where loading a module spent its time, milliseconds.
struct ModuleTimes {
  double read = 0;  // the file (and converting text to binary)
  double decode = 0, validate = 0, translate = 0;
};

// A decoded, validated and translated module, shared by every call that
// runs it (copies share it too).
class Module {
 public:
  // A binary module (.wasm; the command line also reads the text format).
  // Errors name the file.
  static Expected<Module> from_file(const std::string& path, const ModuleOptions& options = {});
  static Expected<Module> from_bytes(std::vector<uint8_t> wasm, const ModuleOptions& options = {});

  const std::vector<Export>& exports() const;
  const std::vector<Import>& imports() const;
  // The export's type, or "unknown export 'f' (exported functions: a, b)".
  Expected<FunctionType> function_type(const std::string& export_name) const;
  // A WASI command: it imports wasi_snapshot_preview1 (Engine::run_command).
  bool is_wasi_command() const;
  uint32_t memory_count() const;
  // Function `index`'s name (the name section's, an export's, or "func[N]").
  std::string function_name(uint32_t index) const;
  // The message of a trap of this module's instance with trap code `code`
  // at function `function` (CallResult::trap_function): trap_message(code),
  // and for an unknown import's trap the import ("unknown import called:
  // env.foo").
  std::string trap_message(uint8_t code, uint32_t function) const;
  const ModuleTimes& times() const;
  // A listing of the module for people: imports, exports, functions with
  // their frames and callees, recursion, code sizes, load times; `label`
  // names it on the first line.
  std::string describe(const std::string& label) const;
  // Its register bytecode, function by function.
  std::string disassemble() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Module(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// One parameter's value for every instance of a call: the same for all, each
// instance's own (a column with a row per instance), or each instance's
// index converted to the parameter's type.
class Arg {
 public:
  static Arg i32(int32_t v);
  static Arg i64(int64_t v);
  static Arg f32(float v);
  static Arg f64(double v);
  static Arg column(std::span<const int32_t> rows);
  static Arg column(std::span<const int64_t> rows);
  static Arg column(std::span<const float> rows);
  static Arg column(std::span<const double> rows);
  static Arg index();
  // Any type as raw bits (i32 and f32 in the low half; a reference's
  // null is 0), the same for every instance or a row per instance.
  static Arg scalar_bits(ValueType type, uint64_t bits);
  // A v128, the same for every instance: `lo` holds its bytes 0-7 (lane 0
  // in the low bits, little-endian as in memory), `hi` bytes 8-15. Its
  // bits() are {lo, hi}. v128 arguments are constants only.
  static Arg v128(uint64_t lo, uint64_t hi);
  static Arg column_bits(ValueType type, std::vector<uint64_t> rows);
  // A column in GPU memory (a CUDA device pointer): a row per instance,
  // 4 bytes each for i32 and f32, 8 for i64 and f64. The GPU backend reads
  // it where it is, once the device has finished the work before the call.
  static Arg device_column(const void* device_data, ValueType type);

  enum class Kind : uint8_t { Scalar, Column, Index, DeviceColumn };
  Kind kind() const { return kind_; }
  ValueType type() const { return type_; }
  // Raw bits, one per row (one for a scalar): i32 and f32 in the low half.
  const std::vector<uint64_t>& bits() const { return bits_; }
  const void* device_data() const { return device_; }

 private:
  Arg(Kind k, ValueType t, std::vector<uint64_t> bits) : kind_(k), type_(t), bits_(std::move(bits)) {}
  Kind kind_;
  ValueType type_;
  std::vector<uint64_t> bits_;
  const void* device_ = nullptr;
};

// Bytes written into each instance's memory 0 at `address` before the
// call: record i (record_size bytes) of `bytes` goes to instance i. With
// `address_export` (a () -> i32 function or an i32 global the module
// exports) the address is each instance's value of it instead.
struct MemoryIn {
  uint64_t address = 0;
  uint64_t record_size = 0;
  std::span<const uint8_t> bytes = {};
  std::string address_export = {};
};

// `length` bytes read from each instance's memory 0 at `address` (or at
// `address_export`'s value) after the call (zeros for an instance that
// trapped).
struct MemoryOut {
  uint64_t address = 0;
  uint64_t length = 0;
  std::string address_export = {};
};

// Tightly packed RGBA8 rows, top row first.
struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgba = {};  // width * height * 4 bytes
};

// What the `gpu` import module's intrinsics share across a call's
// instances: the canvas of set_pixel, the i32 state of read_state,
// write_state and atomic_add, and the textures of texture_sample.
struct GpuIntrinsics {
  uint32_t image_width = 0, image_height = 0;  // 0: no canvas (set_pixel is ignored)
  std::vector<int32_t> state = {};             // empty: no state (its calls trap)
  struct Texture {
    uint32_t unit = 0;  // 0..15
    Image image = {};
  };
  std::vector<Texture> textures = {};
  bool bilinear = false;  // texture filtering; nearest otherwise
};

// A function the module imports (module.name), served by this program. It
// gets the calling instance's index and the arguments, and writes the
// results, all as raw bits (i32 and f32 in the low half); returning false
// ends that instance with the trap "host function failed". Calls come
// from many threads at once: CPU workers, and on the GPU the host's
// servers, while the instances that made them wait in their wave (the
// GPU's kernels leave and resume around them).
struct HostFunction {
  std::string module{}, name{};
  FunctionType type = {};
  std::function<bool(uint64_t instance, std::span<const uint64_t> args, std::span<uint64_t> results)> fn = {};
};

enum class Backend : uint8_t { Auto, Cpu, Gpu };
enum class Tier : uint8_t { Auto, Interpreter, Compiled };
// What stands in for a function import that nothing provides (neither the
// `gpu` module, nor WASI in a WASI command, nor a host function), as
// wasmtime's --unknown-imports-trap and --unknown-imports-default do. A
// module that calls such imports only on rare paths (wasm-bindgen
// placeholders, emscripten hooks, `env` stubs) then runs; only the
// instances that call one are affected. Memories, tables and globals that
// nothing provides stay an error whatever this says.
enum class UnknownImports : uint8_t {
  Error,  // the call fails before anything runs: "unsatisfied import env.foo (func)"
  Trap,   // a call traps that instance: "unknown import called: env.foo" (kTrapUnknownImport)
  // A call returns zeros of its result types (0, +0.0, null; a zero v128
  // on the CPU, where the GPU refuses imports with v128 in their type) and
  // does nothing else.
  Default,
};
// How each instance's linear memory lies in GPU memory: interleaved (a
// warp's accesses to the same address are one transaction), contiguous
// (one block an instance) or sparse (chunks taken on first write, for
// large or mostly unwritten memories); Auto: wasmwarp chooses per batch.
enum class MemoryLayout : uint8_t { Auto, Interleaved, Contiguous, Sparse };

// The GPU batch path's tuning values. The defaults are what the
// benchmarks were measured with; every value gives the same results, so
// these are for experiments (docs/reference.md, "GPU tuning").
struct GpuTuning {
  // The most slices a wave whose instances take inputs runs in, each
  // slice's transfers beside another slice's kernel (1 to 8; 1: one launch).
  uint32_t wave_slices = 8;
  // The most stretches a wave's results come down in while its kernel
  // still runs (1 to 8; 1: after it).
  uint32_t stream_stretches = 8;
  // The ring of pinned host pieces transfers go through: each piece's
  // size (1 to 1024 MiB) and their number (2 to 8).
  uint32_t staging_piece_mib = 4;
  uint32_t staging_pieces = 8;
  // Host threads that copy and fill result columns, the calling thread
  // included; 0: every core. Set before the process's first call.
  uint32_t host_workers = 0;
  // Wave loops per GPU (1 to 8), each with its share of the GPU's memory,
  // so that one wave's transfers and host work overlap another's kernel.
  uint32_t wave_loops_per_gpu = 1;
};

struct EngineOptions {
  Backend backend = Backend::Auto;  // Auto: the GPU when one is usable
  Tier tier = Tier::Auto;           // Auto: compiled code once it is ready
  // Tier::Auto: how long a call that ends before its background compile
  // waits for it (so that the cache gets the code); past that the compile
  // goes on beside the program (background_compiles_running). Negative:
  // until it ends.
  double compile_wait_s = -1;
  unsigned threads = 0;        // CPU workers; 0 = every core
  bool cache = true;           // the compiled-code cache
  std::string cache_dir = {};  // empty: $WW_CACHE_DIR, else ~/.cache/wasmwarp
  // Imports this program serves (others: the `gpu` intrinsics; anything
  // else is an unsatisfied import, unless unknown_imports stands in for it).
  std::vector<HostFunction> host_functions = {};
  // Function imports nothing provides: an error, or stand-ins that trap or
  // return zeros when called, on every backend and tier (on the GPU the
  // device answers them without leaving its kernel).
  UnknownImports unknown_imports = UnknownImports::Error;
  // The GPU's choices (0 or "auto": wasmwarp's own).
  struct Gpu {
    MemoryLayout layout = MemoryLayout::Auto;  // linear memory
    uint32_t stack_slots_limit = 0;            // 64-bit frame slots per instance; 0 = the CPU's limit
    uint32_t call_depth_limit = 0;             // call frames per instance; 0 = the CPU's limit
    uint32_t memory_pages = 0;                 // linear-memory capacity per instance, 64 KiB pages
    uint32_t max_wave = 0;                     // instances per wave, at most
    // The GPUs a call spreads its instances over: these ordinals (one
    // listed twice is shared, each taking part of its memory), or with
    // none listed every visible GPU, at most max_devices of them (0: all).
    // Instances go to the GPUs as they finish work, so a faster GPU takes
    // more; results come back in instance order as on one GPU.
    std::vector<int> devices = {};
    unsigned max_devices = 0;
    // The part of each GPU's free memory this process plans with (several
    // processes sharing GPUs, as MPI ranks may).
    double memory_share = 1;
    GpuTuning tuning = {};
  } gpu = {};
};

// One call of a chain (Engine::chain): an export, its arguments, and how
// many times it runs in a row.
struct Call {
  std::string export_name = {};
  // Columns only in a first call that runs once; otherwise scalars or
  // Arg::index().
  std::vector<Arg> args = {};
  uint64_t repeat = 1;
};

// A WASI command's world (a module importing wasi_snapshot_preview1, run
// through _start), the same for every instance but where "@index" (in
// args) and "{i}" (in paths) stand for the instance's index.
struct WasiOptions {
  std::string program = "main.wasm";   // argv[0]
  std::vector<std::string> args = {};  // argv[1..]
  std::vector<std::string> env = {};   // NAME=VALUE
  struct Dir {
    std::string host = {};   // a directory here
    std::string guest = {};  // its name in the program (empty: the same as host)
    // The program may create and change files beneath it; with more than
    // one instance, `host` needs "{i}" (a directory per instance).
    bool writable = false;
  };
  std::vector<Dir> dirs = {};  // read-only unless writable
  // Files per instance ("{i}"); empty stdout/stderr: collected per
  // instance (CallResult::stdout_of); empty stdin: nothing to read.
  std::string stdin_pattern{}, stdout_pattern{}, stderr_pattern{};
  uint64_t seed = 0;                         // random_get: instance i draws from seed + i
  uint64_t output_cap = uint64_t(64) << 20;  // bytes of stdout, and of stderr, per instance
  // One instance on the process's own stdin, stdout and stderr, on the
  // CPU (as `wasmtime run` runs a command); the patterns are unused.
  bool process_stdio = false;
};

// A call's per-instance outcome as flat columns: results (instance-major,
// instances x types.size(), raw bits), trap codes, where each trap
// happened, and the memory outputs (instances x length each).
struct ResultColumns {
  uint64_t instances = 0;
  std::vector<ValueType> types;
  std::vector<std::string> names;  // empty: result0, result1, ...
  // Null when results32 holds them.
  const uint64_t* results = nullptr;
  // The results when every one is an i32 or an f32: 4 bytes a value (the
  // column the GPU copies into); results is then null.
  const uint32_t* results32 = nullptr;
  // As results, the high words of v128 results (bytes 8-15; the low word
  // is in results); null when no result is a v128.
  const uint64_t* results_hi = nullptr;
  const uint8_t* traps = nullptr;
  // Trap site: the module's function index and the bytecode word offset
  // in it (kNoTrapOffset: outside the code).
  const uint32_t* trap_function = nullptr;
  const uint32_t* trap_offset = nullptr;
  std::vector<const uint8_t*> memory_out;

  // Result k of instance i, raw bits (i32 and f32 in the low half).
  uint64_t bits(uint64_t i, size_t k) const {
    const uint64_t at = i * types.size() + k;
    return results32 ? results32[at] : results[at];
  }
};

struct CallOptions {
  // The call's instances as instances [first_index, first_index + n) of a
  // batch of total_instances (0: n), one share of it (an MPI rank's, a
  // cluster job's): what an instance sees of its index (Arg::index(),
  // gpu.thread_id and gpu.instance_count, a host function's instance, a
  // WASI program's @index, {i} and random seed) is the whole batch's;
  // argument columns, memory inputs and outputs and the results are this
  // call's rows. Not for resident instances.
  uint64_t first_index = 0;
  uint64_t total_instances = 0;
  uint64_t fuel = 0;     // per instance: back-edges and calls; 0 = unlimited
  double timeout_s = 0;  // stop running instances after this long; 0 = none
  std::vector<MemoryIn> memory_in = {};
  std::vector<MemoryOut> memory_out = {};
  // Set it (from another thread, a signal handler) to stop the call:
  // instances still running end as "not finished: interrupted".
  const std::atomic<bool>* cancel = nullptr;
  // About twice a second while instances run.
  std::function<void(uint64_t done, uint64_t total)> progress = {};
  // Engine::chain on the GPU: one kernel launch per call instead of one
  // for the whole chain (the state stays on the device either way; one
  // launch is faster, as bench/chain/run.sh shows).
  bool gpu_launch_per_call = false;
  // GPU only: results stay in GPU memory (CallResult::device_result), as
  // columns the CallResult owns; its host results are then zeros.
  bool results_on_device = false;

  // Exports run once, in order, in one instance (scalar arguments only),
  // whose state then seeds every instance of the call.
  std::vector<Call> init = {};
  // The directories the `gpu` intrinsics read_file and write_file reach
  // (a WASI command's are WasiOptions::dirs).
  std::vector<WasiOptions::Dir> dirs = {};
  GpuIntrinsics intrinsics = {};
  // While the call runs: rows [0, ready) of `columns` (the call's result,
  // filling) are final and may be written out. From the call's own
  // threads, `ready` only growing; `columns` stays valid until the call
  // returns (and as CallResult::columns() after).
  std::function<void(const ResultColumns& columns, uint64_t ready)> on_ready = {};
  // Lines worth showing before anything runs (the GPU's memory plan).
  std::function<void(const std::string& line)> note = {};
};

// "auto", "cpu", "gpu" / "auto", "interp", "compiled".
const char* backend_name(Backend b);
const char* tier_name(Tier t);
// "auto", "interleaved", "contiguous", "sparse", and back (nullopt for any
// other name).
const char* memory_layout_name(MemoryLayout l);
std::optional<MemoryLayout> parse_memory_layout(std::string_view name);

// Whether compiles that calls stopped waiting for still run (their code
// reaches the cache when they end; returning from main() waits for them).
bool background_compiles_running();
// Ends the process with `status` at once, without those compiles: host
// compilers are killed and the cache is left whole. A program's last step,
// its outputs closed.
[[noreturn]] void exit_stopping_compiles(int status);
// For a signal handler about to end the process (the command line's
// second Ctrl-C): kills every running host compiler with the processes it
// started. Async-signal-safe.
void kill_compilers_from_signal_handler();

// Where a call's time went, milliseconds of wall time. The GPU's phases
// end with the device synchronised; the CPU's split each run's wall time
// by its workers' summed time per phase.
struct PhaseTimes {
  double read_inputs = 0;    // the caller's (CallResult::set_caller_phases)
  double translate = 0;      // the caller's: decode, validate, translate
  double compile = 0;        // codegen + compiler + load, when the call waited for it
  double plan = 0;           // device probe, initial image, memory plan
  double upload = 0;         // module, arguments and memory inputs to the device
  double memory_setup = 0;   // instances' initial state
  double kernel = 0;         // running the export
  double download = 0;       // results, traps and memory outputs back
  double write_outputs = 0;  // the caller's
  double host_calls = 0;     // GPU: serving calls on the host between launches (inside `kernel`)
  double gpu_startup = 0;    // starting the CUDA driver and context (overlapped by Engine::warm_up)
};

// A stretch of instances that ran one way.
struct Segment {
  uint64_t first = 0, count = 0;
  Backend backend = Backend::Cpu;
  Tier tier = Tier::Interpreter;
  double seconds = 0;
};

// One GPU's part of a call spread over several.
struct GpuShare {
  int device = 0;  // ordinal
  std::string name;
  uint64_t instances = 0;
  double seconds = 0;  // its wall time
  double kernel_ms = 0;
};

// How a call ran: where, in which tier, what compiling cost, where the
// time went, and the GPU's memory per instance and waves.
struct RunReport {
  Backend backend = Backend::Cpu;
  std::string backend_note;  // why not the GPU, when Backend::Auto chose the CPU
  std::string device;        // the GPU's name
  // A call on several GPUs: each one's part (empty on one GPU); phases and
  // kernel_ms are then the GPUs' average.
  std::vector<GpuShare> gpus;
  unsigned threads = 0;  // CPU workers
  double wall_s = 0;
  double kernel_ms = 0;  // GPU kernels, all segments
  PhaseTimes phases;
  std::vector<Segment> segments;
  struct Compile {
    bool attempted = false;
    bool used = false;  // compiled code ran at least one segment
    bool cache_hit = false;
    double generate_ms = 0, compile_ms = 0, load_ms = 0;
    // Why compiled code did not run (the interpreter did instead, or nothing ran: an interrupt), one line.
    std::string fallback;
    std::string cache_note;     // cache trouble that did not stop the call
    bool left_running = false;  // the call stopped waiting for its compile (EngineOptions::compile_wait_s)
    // The auto tier on the CPU for a small batch or a large module: it ran
    // on the interpreter at once while its hot functions (calls and loop
    // back-edges past a threshold) were compiled in units in the background
    // and taken up from their next call on.
    struct TierUp {
      bool on = false;
      uint32_t hot = 0;         // functions that got hot
      uint32_t compiled = 0;    // functions whose compiled code was loaded
      uint32_t units = 0;       // units loaded, cache hits included
      uint32_t cache_hits = 0;  // units found in the cache
      uint32_t failed = 0;      // units the compiler could not build
      double compile_s = 0;     // the units' compile time, summed
      std::string error;        // the first unit that failed, one line
    } tier_up;
  } compile;
  // GPU: calls served on the host and the passes (launches) that served them.
  uint64_t host_calls = 0, host_passes = 0;
  uint64_t device_output_bytes = 0;                  // WASI output collected on the GPU
  uint64_t device_files = 0, device_file_bytes = 0;  // read-only files read on the GPU
  // GPU memory per instance (linear memory plus frames, globals, tables,
  // status); sparse memory's linear bytes are those taken from the pool.
  uint64_t device_bytes_per_instance = 0;
  uint64_t linear_bytes_per_instance = 0;
  uint64_t reserved_bytes_per_instance = 0;
  uint64_t pool_reruns = 0;       // instances that ran again after the pool ran out
  uint64_t replans = 0;           // plans made again with less memory after the GPU refused a wave's buffers
  uint64_t stack_reruns = 0;      // compiled code's instances out of CUDA stack, run again interpreted
  uint64_t grow_reruns = 0;       // instances whose memory grew past the GPU's reservation, run again with more
  uint64_t stack_pool_bytes = 0;  // call-stack segments, at the most
  uint32_t wave_size = 0, waves = 0;
  MemoryLayout memory_layout = MemoryLayout::Auto;  // the GPU's (Auto: the call ran on the CPU)
};

// Every instance's outcome of one call.
class CallResult {
 public:
  uint64_t instances() const;
  const std::vector<ValueType>& result_types() const;
  // Result k of instance i (valid when it did not trap). Raw bits: i32 and
  // f32 in the low half.
  uint64_t bits(uint64_t instance, size_t k = 0) const;
  int32_t i32(uint64_t instance, size_t k = 0) const { return int32_t(uint32_t(bits(instance, k))); }
  int64_t i64(uint64_t instance, size_t k = 0) const { return int64_t(bits(instance, k)); }
  float f32(uint64_t instance, size_t k = 0) const;
  double f64(uint64_t instance, size_t k = 0) const;
  // A v128 result's high word (bytes 8-15; bits() is bytes 0-7); 0 for
  // results of other types.
  uint64_t bits_hi(uint64_t instance, size_t k = 0) const;
  // All results, instance-major: instances() x result_types().size().
  // When every result is an i32 or an f32 they are held 4 bytes a value
  // (all_bits32()), and the first all_bits() makes a widened copy.
  std::span<const uint64_t> all_bits() const;
  // All results when every one is an i32 or an f32, as held; empty otherwise.
  std::span<const uint32_t> all_bits32() const;

  // With CallOptions::results_on_device: result k of every instance, a
  // column in GPU memory (4 or 8 bytes a row, zeros where an instance
  // trapped) that lives as long as this result or a copy of it; null
  // otherwise.
  const void* device_result(size_t k) const;
  // Keeps the device columns alive (for an array that exports them).
  std::shared_ptr<const void> device_owner() const;

  // 0 for an instance that returned; else its trap code.
  std::span<const uint8_t> trap_codes() const;
  bool trapped(uint64_t instance) const { return trap_codes()[instance] != 0; }
  uint64_t trap_count() const;
  // "integer divide by zero", "not finished: timeout", "unknown import
  // called: env.foo", ...; "" when none.
  std::string trap_message(uint64_t instance) const;

  // Memory read after the call, per CallOptions::memory_out entry:
  // instances() x length bytes.
  std::span<const uint8_t> memory_out(size_t k) const;

  // A WASI command's exit code (proc_exit's, or 0 when _start returned),
  // and its stdout and stderr when they were collected.
  int32_t exit_code(uint64_t instance) const { return i32(instance, 0); }
  std::string_view stdout_of(uint64_t instance) const;
  std::string_view stderr_of(uint64_t instance) const;

  Backend backend() const;     // where the call ran
  std::string device() const;  // the GPU's name, or "threads=N"

  // False for an instance the timeout or a cancel stopped (or never started).
  bool finished(uint64_t instance) const;
  // Where instance i trapped: the module's function index and bytecode
  // offset (kNoTrapOffset: outside the code).
  uint32_t trap_function(uint64_t instance) const;
  uint32_t trap_offset(uint64_t instance) const;
  ResultColumns columns() const;
  const RunReport& report() const;
  // The caller's own phases (reading inputs, writing outputs), for a
  // report that covers the whole job.
  void set_caller_phases(double read_inputs, double translate, double write_outputs);
  // WASI: instances whose output was cut at WasiOptions::output_cap, and
  // the first of them.
  uint64_t output_capped() const;
  uint64_t first_output_capped() const;
  // The `gpu` intrinsics after the call: the canvas (when one was asked
  // for), the state, and set_pixel calls that fell outside the canvas.
  const Image* image() const;
  const std::vector<int32_t>& state() const;
  uint64_t ignored_pixels() const;

  struct Impl;
  explicit CallResult(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

// N instances that keep their state between calls (Engine::instances):
// their memories, globals and tables as the last call left them. On the
// GPU they stay on the device; a call sends its arguments and memory
// inputs, and only what it returns or asks for comes back. An instance
// that trapped (or that a timeout or cancel stopped partway) keeps its
// trap: later calls skip it and report that trap again. Calls on one
// Instances run one at a time; copies share the instances.
class Instances {
 public:
  uint64_t count() const;
  Backend backend() const;
  // Calls an export on every instance, as Engine::call does on fresh ones.
  Expected<CallResult> call(const std::string& export_name, const std::vector<Arg>& args,
                            const CallOptions& options = {});
  // Calls one after another, as Engine::chain (one launch per wave on the GPU).
  Expected<CallResult> chain(const std::vector<Call>& calls, const CallOptions& options = {});
  // `length` bytes at `address` of every instance's memory 0, instance by
  // instance (count() x length; zeros for one that trapped).
  Expected<std::vector<uint8_t>> read_memory(uint64_t address, uint64_t length) const;
  // Record i (record_size bytes) of `bytes` written at `address` in
  // instance i's memory 0; the bytes written in all. A range past any
  // instance's memory is an error, and nothing is written.
  Expected<uint64_t> write_memory(uint64_t address, uint64_t record_size, std::span<const uint8_t> bytes);

  struct Impl;
  explicit Instances(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

// Engine::compile's choices: which exports (empty: every exported
// function), and the variants runs will need.
struct CompileRequest {
  std::vector<std::string> exports = {};
  std::string gpu_arch = {};                            // "sm_90": compile for that GPU without one (the cache only)
  bool metered = false;                                 // for calls with fuel
  bool deadline = false;                                // for GPU calls with a timeout
  MemoryLayout gpu_layout = MemoryLayout::Interleaved;  // never Auto: code is built for one layout
  bool emit_source = false;                             // keep the generated source (CompileInfo::sources)
  // Generate the sources only, compiling nothing: a source to read even
  // when the compiler would fail on it.
  bool source_only = false;
};

struct CompileInfo {
  Backend target = Backend::Cpu;
  bool cache_hit = false;
  double generate_ms = 0, compile_ms = 0, load_ms = 0, total_ms = 0;
  std::string cache_dir, key;  // where the code went, when cached
  std::string cache_note;      // cache trouble that did not stop it
  // The translation units (several for a large module on the CPU).
  std::vector<std::string> sources;
};

// Runs calls: which backend and tier, and the compiled-code cache.
class Engine {
 public:
  explicit Engine(EngineOptions options = {}) : options_(std::move(options)) {}
  const EngineOptions& options() const { return options_; }

  // Calls export `export_name` of `m` on `instances` fresh instances, with
  // one Arg per parameter. A trap is an instance's outcome, never an
  // error; errors are bad input (an unknown export, arguments that do not
  // fit it) or a backend that cannot run (Backend::Gpu without a GPU).
  Expected<CallResult> call(const Module& m, const std::string& export_name, uint64_t instances,
                            const std::vector<Arg>& args, const CallOptions& options = {}) const;
  // Calls `calls` in order on the same `instances` fresh instances, each
  // on the state the one before left (memories, globals, tables): an init,
  // then a step k times, then a read-out, with nothing going back to the
  // host in between (on the GPU, the chain runs in one launch per wave).
  // The results are the last call's; an instance that traps stops there,
  // and its trap is its outcome. Memory inputs go in before the first call
  // and memory outputs come out after the last.
  Expected<CallResult> chain(const Module& m, uint64_t instances, const std::vector<Call>& calls,
                             const CallOptions& options = {}) const;
  // `n` instances of `m` that stay (Instances), started as a fresh
  // instance starts (its start function run); the backend and tier are
  // chosen now, with code compiled for every export.
  Expected<Instances> instances(const Module& m, uint64_t n) const;
  // Runs a WASI command's _start on `instances` instances. Its exit code is
  // each instance's result; a trap other than proc_exit is its trap.
  Expected<CallResult> run_command(const Module& m, uint64_t instances, const WasiOptions& wasi,
                                   const CallOptions& options = {}) const;
  // Compiles `m` ahead of time into the compiled-code cache (the GPU when
  // the engine's backend is, or when gpu_arch is given).
  Expected<CompileInfo> compile(const Module& m, const CompileRequest& request) const;
  // Starts the GPU's driver and context (and NVRTC, unless the tier is the
  // interpreter) in the background, a long wait on a cold machine, while
  // the caller reads its inputs; the first call waits for it. Nothing for
  // Backend::Cpu.
  void warm_up() const;

 private:
  EngineOptions options_;
};

// The message of trap code `code` (CallResult::trap_codes).
std::string trap_message(uint8_t code);

// Checks that a binary module is valid WebAssembly 2.0 (decoded and
// validated, not translated): the error, or none.
std::optional<Error> validate(std::vector<uint8_t> wasm);

// Returns once an Engine::warm_up has finished: a process must not exit
// while it loads the CUDA libraries.
void wait_for_warm_up();

// Pins `bytes` of host memory at `p` (a call's MemoryIn records, say) so
// that the GPU copies straight from and into it, without the copies
// through pinned staging buffers that otherwise bound a batch with large
// inputs. Registered by the GPU's start-up (Engine::warm_up) once it has a
// context, else at once. Worth it for buffers of megabytes that cross once
// or more; smaller ones (under 4 MiB) are left as they are. One call per
// buffer. unpin_host_memory(p) must come before the
// memory is freed. Without a GPU, nothing happens.
void pin_host_memory(const void* p, size_t bytes);
void unpin_host_memory(const void* p);

// The GPUs this process sees (CUDA_VISIBLE_DEVICES applies): 0 without a
// GPU, a driver or CUDA support.
int gpu_count();

}  // namespace wasmwarp
