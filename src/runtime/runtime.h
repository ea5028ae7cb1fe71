// The runtime's own interface: compile a module once, instantiate it in a
// Store as often as needed, invoke exports. The CLI, the batch engine, the
// spec test runner and the public API (include/wasmwarp/wasmwarp.h) are
// built on it; it is internal (it hands out the store's internals).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/file_read.h"
#include "common/result.h"
#include "decode/decoder.h"
#include "decode/module.h"
#include "semantics/traps.h"
#include "translate/translator.h"

namespace ww {

// A typed value. Numbers are stored as raw bits (i32/f32 in the low 32 bits,
// upper bits zero). References: 0 is null; a funcref is (store function
// address + 1); an externref is (host value + 1).
struct Value {
  ValType type = ValType::I32;
  uint64_t bits = 0;
  uint64_t hi = 0;  // a v128's high word (bits holds its low word)

  static Value i32(int32_t v) { return {ValType::I32, uint32_t(v)}; }
  static Value i64(int64_t v) { return {ValType::I64, uint64_t(v)}; }
  static Value f32_bits(uint32_t b) { return {ValType::F32, b}; }
  static Value f64_bits(uint64_t b) { return {ValType::F64, b}; }
  static Value null(ValType t) { return {t, 0}; }
};

struct CompileOptions {
  DecodeOptions decode;
  TranslateOptions translate;
  // Reject modules whose call graph has a cycle, with
  // "recursion not supported: functions F, G form a cycle".
  bool deny_recursion = false;
};

// A decoded, validated and translated module. Immutable, so one instance of
// it is shared by every Store and thread that runs the module.
struct CompiledModule {
  Module module;
  TranslatedModule code;  // bytecode, manifests, call graph
  double decode_ms = 0, validate_ms = 0, translate_ms = 0;
};

Result<std::shared_ptr<const CompiledModule>> compile_module(std::vector<uint8_t> bytes,
                                                             const CompileOptions& opts = {});
// Reads and compiles a file; "cannot open FILE: No such file or directory",
// "FILE is a directory", "FILE is empty" and the like on bad paths.
Result<std::shared_ptr<const CompiledModule>> compile_file(const std::string& path, const CompileOptions& opts = {});

class Store;

// A host function sees its arguments in slots[0..params) and writes its
// results to slots[0..results). It returns TrapCode::None or a trap.
using HostFunc = std::function<TrapCode(Store& store, uint64_t* slots)>;

struct ExternVal {
  ExternKind kind = ExternKind::Func;
  uint32_t addr = 0;  // store address in the space of `kind`
};

struct StoreLimits {
  uint32_t max_call_depth = 20000;        // frames before "call stack exhausted"
  uint32_t stack_slots = 4u << 20;        // 64-bit value-stack slots (32 MiB)
  uint32_t max_memory_pages = kMaxPages;  // cap on memory.grow, below a module's own max
  // Cap on table sizes (initial and through table.grow): the spec allows up
  // to 2^32-1 elements, which would exhaust host memory before it failed.
  uint32_t max_table_size = 10'000'000;
  uint64_t fuel = 0;  // instructions per invoke; 0 = unlimited
  // When set and non-zero, running code stops within about a millisecond
  // with this value as its trap code (TrapCode::Timeout, ::Interrupted):
  // how a batch's deadline or Ctrl-C reaches an instance in a loop.
  const std::atomic<uint8_t>* interrupt = nullptr;
};

// Where and why the last invocation trapped.
struct TrapInfo {
  TrapCode code = TrapCode::None;
  uint32_t func_index = 0;  // module function index of the trapping function
  uint32_t pc = 0;          // bytecode word offset within that function
  std::string message() const { return trap_message(code); }
};

struct InvokeResult {
  TrapCode trap = TrapCode::None;
  std::vector<Value> results;  // valid when trap == None
  bool ok() const { return trap == TrapCode::None; }
};

enum class InstantiateErrorKind { Unlinkable, Trap };
struct InstantiateError {
  InstantiateErrorKind kind;
  std::string message;  // "unknown import", "incompatible import type", or a trap message
};

// An instance's state in terms of its module, not of the store it lives in:
// taken once (after a batch's --init exports ran), it seeds instances in any
// store without running segments or the start function again. Function
// references are module function indices + 1 (0 = null).
struct InstanceSnapshot {
  struct Memory {
    uint32_t pages = 0;
    std::vector<uint8_t> bytes;  // pages * 64 KiB
    // The only blocks of kSnapshotBlock bytes a new instance copies (a
    // fresh memory is zero): 4 KiB, so an image whose data sit in a corner
    // of a 64 KiB page costs a few KiB per instance, not the page.
    static constexpr uint64_t kSnapshotBlock = 4096;
    std::vector<uint32_t> nonzero_blocks;
  };
  std::vector<Memory> memories;                      // the module's own memories
  std::vector<uint64_t> globals;                     // the module's own globals
  std::vector<uint64_t> globals_hi;                  // their v128 high words (0 for the rest)
  std::vector<std::vector<uint64_t>> tables;         // the module's own tables
  std::vector<std::vector<uint64_t>> elem_segments;  // what elem.drop left
  std::vector<uint8_t> data_dropped;
};

// An instance's state as the changes since it was last reset to an image
// (Store::reset_instance): the memory granules written since, each with
// the bytes a store at its end spilled into the next (as reset_instance
// copies them back), its memories' sizes, and all of its globals, tables,
// segments and dropped flags, in module terms as in a snapshot. Resident
// batch instances on the CPU live as these between calls: a few hundred
// bytes for a program that touches little, where a whole memory would be
// its pages.
struct InstanceDelta {
  static constexpr uint32_t kGranuleShift = 8;                             // sem::kWrittenShift
  static constexpr uint64_t kStride = (uint64_t(1) << kGranuleShift) + 8;  // a granule and its spill
  struct Memory {
    uint32_t pages = 0;
    std::vector<uint32_t> granules;  // increasing
    std::vector<uint8_t> bytes;      // kStride per granule (past the memory's end: zeros)
  };
  std::vector<Memory> memories;  // empty: the image's state, untouched
  std::vector<uint64_t> globals;
  std::vector<uint64_t> globals_hi;  // v128 high words (0 for the rest)
  std::vector<std::vector<uint64_t>> tables;
  std::vector<std::vector<uint64_t>> elem_segments;
  std::vector<uint8_t> data_dropped;
};

struct StoreImpl;  // defined in store/store.h; the interpreter reads it directly

// The spec's store: every function, table, memory, global and instance that
// exists together. Not thread-safe; batch runs use one Store per thread.
class Store {
 public:
  explicit Store(StoreLimits limits = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  uint32_t add_host_func(const FuncType& type, HostFunc fn);
  uint32_t add_table(const TableType& type, uint64_t init_ref = 0);
  uint32_t add_memory(const MemoryType& type);
  uint32_t add_global(const GlobalType& type, uint64_t bits);

  // Instantiates `m` with `imports` given in the order of the module's
  // import section. Runs active segments and the start function. On a trap
  // during instantiation, effects on imported tables/memories stay (2.0).
  std::variant<uint32_t, InstantiateError> instantiate(std::shared_ptr<const CompiledModule> m,
                                                       const std::vector<ExternVal>& imports);
  // Instantiates `m` in the state `image` records (taken from an instance
  // of the same module): no segment and no start function runs.
  std::variant<uint32_t, InstantiateError> instantiate(std::shared_ptr<const CompiledModule> m,
                                                       const std::vector<ExternVal>& imports,
                                                       const InstanceSnapshot& image);
  // The instance's own memories, globals, tables and segments. Fails when
  // its state refers to a function of another instance or a host function
  // it does not import, which another store could not resolve.
  Result<InstanceSnapshot> snapshot(uint32_t instance) const;

  // Returns an instance made from `image` (instantiate with it, or an
  // earlier reset) to the image's state, copying only what changed: the
  // memory granules that writes flagged since then, globals, tables and
  // segments. A batch keeps one instance per thread this way instead of
  // making one per input. Fails, changing nothing, when the image is of
  // another module.
  Status reset_instance(uint32_t instance, const InstanceSnapshot& image);
  // What changed in the instance since it was made from an image or last
  // reset to one, and that change made again on an instance just reset to
  // the same image.
  // (capture_delta refills `d`, keeping its vectors' storage.)
  Status capture_delta(uint32_t instance, InstanceDelta& d) const;
  Status apply_delta(uint32_t instance, const InstanceDelta& d);

  std::optional<ExternVal> get_export(uint32_t instance, std::string_view name) const;

  // A Store never removes instances. For embedders that make millions of
  // short-lived ones (batches): frees the memories, tables and element
  // segments the instance itself defined. The caller guarantees nothing
  // uses them again (no other instance imported them).
  void release_instance_storage(uint32_t instance);
  const CompiledModule& instance_module(uint32_t instance) const;

  // Runs the function. Callers check argument count and types against
  // func_type() first (the CLI and the spec runner report mismatches in
  // their own words); a mismatch here returns TrapCode::HostError.
  InvokeResult invoke(uint32_t func_addr, const std::vector<Value>& args);
  // invoke() without its checks and vectors, for loops that checked the
  // function's type once: arguments in io[0..params), results back in
  // io[0..results) (i32 and f32 with their upper bits zero); io holds
  // max(params, results) slots. With io_hi (as long as io): v128 values'
  // high words beside them, in and out.
  TrapCode invoke_slots(uint32_t func_addr, uint64_t* io, uint64_t* io_hi = nullptr);
  // invoke_slots() of one function again and again (a batch calls its
  // export once per input on an instance it reuses): the function's type
  // and its compiled code's binding to the instance are looked up once,
  // here. Null when there is no such function.
  struct PreparedCall;
  std::shared_ptr<PreparedCall> prepare_call(uint32_t func_addr);
  TrapCode invoke_slots(PreparedCall& call, uint64_t* io, uint64_t* io_hi = nullptr);
  const TrapInfo& last_trap() const;

  const FuncType& func_type(uint32_t func_addr) const;
  TableType table_type(uint32_t table_addr) const;  // current size as min
  MemoryType memory_type(uint32_t mem_addr) const;  // current pages as min
  GlobalType global_type(uint32_t global_addr) const;
  Value global_get(uint32_t global_addr) const;
  uint8_t* memory_data(uint32_t mem_addr);
  uint64_t memory_size_bytes(uint32_t mem_addr) const;

  // Free for the embedder: host functions reach per-batch state through it.
  void* user_data = nullptr;

  StoreImpl& impl() { return *impl_; }
  const StoreImpl& impl() const { return *impl_; }

 private:
  std::variant<uint32_t, InstantiateError> instantiate_impl(std::shared_ptr<const CompiledModule> m,
                                                            const std::vector<ExternVal>& imports,
                                                            const InstanceSnapshot* image);
  std::unique_ptr<StoreImpl> impl_;
};

}  // namespace ww
