// The spec runner's view of an execution engine. The runner only parses
// scripts and checks outcomes; everything that touches instances goes through
// this interface, so that the GPU backend (many instances per batch) can
// replace the CPU one without the runner knowing how instances are kept.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/code_cache.h"
#include "exec/gpu/plan/memory_layout.h"
#include "runtime/runtime.h"

namespace ww::spectest {

// What became of an instantiation.
struct InstantiateOutcome {
  enum class Kind {
    Ok,
    Unlinkable,  // an import was missing or had the wrong type
    Trap,        // a segment or the start function trapped
  };
  Kind kind = Kind::Ok;
  uint32_t instance = 0;  // valid when kind == Ok
  std::string message;    // "unknown import", "incompatible import type", a trap message
};

// What became of an action (invoke or get).
struct ActionOutcome {
  enum class Kind {
    Ok,
    Trap,   // the function trapped (call stack exhaustion included)
    Error,  // the action itself is wrong: no such export, argument mismatch
  };
  Kind kind = Kind::Ok;
  std::vector<Value> results;  // valid when kind == Ok
  std::string message;
  TrapCode trap = TrapCode::None;  // valid when kind == Trap
  // Set by a backend that could not run the invoke where it runs the rest
  // (the GPU backend's re-exports and host calls): why it ran on the CPU.
  // The runner tallies these apart, so they never count as that backend's.
  std::string ran_on_cpu;
};

struct BackendOptions {
  // Instructions per invoke before "fuel exhausted", so that a test that
  // never ends costs seconds, not the whole run. 0 = unlimited.
  uint64_t fuel = 0;
  uint32_t max_call_depth = 0;    // 0 = the Store's default
  uint32_t stack_slots = 0;       // 0 = the Store's default
  uint32_t max_memory_pages = 0;  // 0 = the Store's default
  // Largest table size on both backends (table.grow fails past it); 0 = the
  // Store's default on the CPU and size + kTableGrowRoom on the GPU.
  uint32_t max_table_size = 0;
  uint32_t gpu_instances = 64;  // GPU backend: instances per invoke, all with the same arguments
  MemoryLayout gpu_layout = MemoryLayout::Interleaved;  // GPU backend: never Auto
  // The compiled tier: every module is compiled (all its exports; through
  // the cache) and its functions run compiled code instead of an
  // interpreter. A module that cannot be compiled runs interpreted and is
  // reported (tier_report), which fails the run.
  bool compiled = false;
  // With `compiled`: each module's functions split between the tiers
  // (compiled::mixed_split with this seed): about half compiled as one
  // unit, the rest interpreted, calling each other both ways. 0: not split.
  uint64_t mixed_seed = 0;
  CacheOptions cache;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;

  // Starts a new script (one .wast file): forgets every instance and
  // registration of the previous one. The "spectest" host module exists
  // again, fresh, after each reset.
  virtual void reset() = 0;

  // Resolves the module's imports by (module name, field) against the
  // registered instances and "spectest", then instantiates it.
  virtual InstantiateOutcome instantiate(std::shared_ptr<const CompiledModule> m) = 0;

  // Makes the instance's exports importable under module name `as`.
  virtual void register_instance(uint32_t instance, const std::string& as) = 0;

  // Calls exported function `field`; the backend checks argument count and
  // types against the function's type and reports a mismatch as Error.
  virtual ActionOutcome invoke(uint32_t instance, const std::string& field, const std::vector<Value>& args) = 0;

  // Reads exported global `field` (one result).
  virtual ActionOutcome get(uint32_t instance, const std::string& field) = 0;

  // What ran the invokes since the last reset: "invoke: compiled code" ->
  // count, "invoke: interpreter (why)" -> count, and modules that could
  // not be compiled (with the reason). Empty for an interpreter backend.
  virtual std::map<std::string, uint64_t> tier_report() const { return {}; }
};

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& opts);

// The GPU backend: instances live in a CPU Store (instantiation, start
// functions and segments run on the CPU); every invoke of a function the
// instance defines runs as a batch of opts.gpu_instances GPU instances from
// the instance's state, and instance 0's final state is written back.
std::unique_ptr<Backend> make_gpu_backend(const BackendOptions& opts);
// Whether a GPU is usable; `why` says why not. Initializes CUDA in the
// calling process, so a forking runner asks from a child.
bool gpu_available(std::string& why);

}  // namespace ww::spectest
