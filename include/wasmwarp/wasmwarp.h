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

// A decoded, validated and translated module, shared by every call that
// runs it (copies share it too).
class Module {
 public:
  // A binary module (.wasm).
  static Expected<Module> from_file(const std::string& path);
  static Expected<Module> from_bytes(std::vector<uint8_t> wasm);

  const std::vector<Export>& exports() const;
  const std::vector<Import>& imports() const;
  // The export's type, or "unknown export 'f' (exported functions: a, b)".
  Expected<FunctionType> function_type(const std::string& export_name) const;

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
// call: record i (record_size bytes) of `bytes` goes to instance i.
struct MemoryIn {
  uint64_t address = 0;
  uint64_t record_size = 0;
  std::span<const uint8_t> bytes;
};

// `length` bytes read from each instance's memory 0 at `address` after the
// call (zeros for an instance that trapped).
struct MemoryOut {
  uint64_t address = 0;
  uint64_t length = 0;
};

// A function the module imports (module.name), served by this program. It
// gets the calling instance's index and the arguments, and writes the
// results, all as raw bits (i32 and f32 in the low half); returning false
// ends that instance with the trap "host function failed". Calls come
// from many threads at once: CPU workers, and on the GPU the host's
// servers, while the instances that made them wait in their wave (the
// GPU's kernels leave and resume around them).
struct HostFunction {
  std::string module, name;
  FunctionType type;
  std::function<bool(uint64_t instance, std::span<const uint64_t> args, std::span<uint64_t> results)> fn;
};

enum class Backend : uint8_t { Auto, Cpu, Gpu };
enum class Tier : uint8_t { Auto, Interpreter, Compiled };

struct EngineOptions {
  Backend backend = Backend::Auto;  // Auto: the GPU when one is usable
  Tier tier = Tier::Auto;           // Auto: compiled code once it is ready
  unsigned threads = 0;             // CPU workers; 0 = every core
  bool cache = true;                // the compiled-code cache
  std::string cache_dir;            // empty: $WW_CACHE_DIR, else ~/.cache/wasmwarp
  // Imports this program serves (others: the `gpu` intrinsics; anything
  // else is an unsatisfied import).
  std::vector<HostFunction> host_functions;
};

struct CallOptions {
  uint64_t fuel = 0;      // per instance: back-edges and calls; 0 = unlimited
  double timeout_s = 0;   // stop running instances after this long; 0 = none
  std::vector<MemoryIn> memory_in;
  std::vector<MemoryOut> memory_out;
  // Set it (from another thread, a signal handler) to stop the call:
  // instances still running end as "not finished: interrupted".
  const std::atomic<bool>* cancel = nullptr;
  // About twice a second while instances run.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Engine::chain on the GPU: one kernel launch per call instead of one
  // for the whole chain (the state stays on the device either way; one
  // launch is the faster, bench/RESULTS.md).
  bool gpu_launch_per_call = false;
  // GPU only: results stay in GPU memory (CallResult::device_result), as
  // columns the CallResult owns; its host results are then zeros.
  bool results_on_device = false;
};

// One call of a chain (Engine::chain): an export, its arguments, and how
// many times it runs in a row.
struct Call {
  std::string export_name;
  // Columns only in a first call that runs once; otherwise scalars or
  // Arg::index().
  std::vector<Arg> args;
  uint64_t repeat = 1;
};

// A WASI command's world (a module importing wasi_snapshot_preview1, run
// through _start), the same for every instance but where "@index" (in
// args) and "{i}" (in paths) stand for the instance's index.
struct WasiOptions {
  std::string program = "main.wasm";  // argv[0]
  std::vector<std::string> args;      // argv[1..]
  std::vector<std::string> env;       // NAME=VALUE
  struct Dir {
    std::string host;   // a directory here
    std::string guest;  // its name in the program (empty: the same as host)
    // The program may create and change files beneath it; with more than
    // one instance, `host` needs "{i}" (a directory per instance).
    bool writable = false;
  };
  std::vector<Dir> dirs;  // read-only unless writable
  // Files per instance ("{i}"); empty stdout/stderr: collected per
  // instance (CallResult::stdout_of); empty stdin: nothing to read.
  std::string stdin_pattern, stdout_pattern, stderr_pattern;
  uint64_t seed = 0;  // random_get: instance i draws from seed + i
  uint64_t output_cap = uint64_t(64) << 20;  // bytes of stdout, and of stderr, per instance
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
  // All results, instance-major: instances() x result_types().size().
  std::span<const uint64_t> all_bits() const;

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
  // "integer divide by zero", "not finished: timeout", ...; "" when none.
  std::string trap_message(uint64_t instance) const;

  // Memory read after the call, per CallOptions::memory_out entry:
  // instances() x length bytes.
  std::span<const uint8_t> memory_out(size_t k) const;

  // A WASI command's exit code (proc_exit's, or 0 when _start returned),
  // and its stdout and stderr when they were collected.
  int32_t exit_code(uint64_t instance) const { return i32(instance, 0); }
  std::string_view stdout_of(uint64_t instance) const;
  std::string_view stderr_of(uint64_t instance) const;

  Backend backend() const;  // where the call ran
  std::string device() const;  // the GPU's name, or "threads=N"

  struct Impl;
  explicit CallResult(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
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

 private:
  EngineOptions options_;
};

// The message of trap code `code` (CallResult::trap_codes).
std::string trap_message(uint8_t code);

}  // namespace wasmwarp
