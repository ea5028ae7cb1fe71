// The code generator of the compiled tier: a translated module's register
// bytecode -> one C++ translation unit, for the CPU (a shared object with
// an entry table, codegen/rt/cpu_abi.h) or the GPU (one kernel with the
// interpreter kernel's parameters). docs/compiled-tier.md says why it
// starts from the bytecode rather than the wasm.
//
// Frame slots become locals (the compiler keeps them in registers),
// branches become labels and gotos, br_table a switch, direct calls C++
// calls, call_indirect a switch over the functions of the right type, and
// each op's body is ops.def's own text with its operands filled in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "exec/gpu/plan/memory_layout.h"
#include "runtime/runtime.h"

namespace ww::codegen {

enum class Target : uint8_t { Cpu, Gpu };

struct Options {
  Target target = Target::Cpu;
  // Module function indices of the functions entered from outside; empty:
  // every exported function.
  std::vector<uint32_t> entries;
  // A unit of the module's code (the CPU only; mixed tiers, tier-up):
  // exactly these defined functions, every one an entry, ascending. Their
  // calls to the module's other functions leave the code through the host
  // (CpuHostApi::call_import), which runs the callee interpreted or in
  // another unit. Empty: `entries` and what they reach.
  std::vector<uint32_t> functions;
  bool metered = false;                             // fuel at back-edges and calls
  bool deadline = false;                            // the timeout (GPU) or the interrupt byte (CPU) at back-edges
  MemoryLayout layout = MemoryLayout::Interleaved;  // GPU: never Auto
  SparseMisses sparse_misses = SparseMisses::BySize;
  // A large module is split into at most this many units, compiled in
  // parallel and linked (1: always one unit).
  uint32_t max_units = 1;
  uint32_t ops_per_unit = 20000;  // about what g++ -O2 compiles in seconds
};

struct Generated {
  // The translation units, each including "codegen/rt/ww_rt.h" (see
  // codegen/embedded.h for the self-contained form a compiler gets); the
  // first holds the entry points. `source` is all of them, for reading.
  std::vector<std::string> units;
  std::string source;
  std::vector<uint32_t> compiled;  // defined-function indices, ascending
  std::vector<uint32_t> entries;   // defined functions with an entry point
  bool recursive = false;          // some compiled function may recurse (a call cycle, or call_indirect)
  // GPU: words of saved frames an instance leaving for the host may need
  // (an estimate when calls that may leave recurse); 0: nothing leaves.
  uint64_t leave_words = 0;
};

// The name of the GPU kernel in generated code.
inline constexpr const char* kGpuKernelName = "ww_compiled_kernel";
// The CPU shared object's exported symbols.
inline constexpr const char* kCpuEntriesSymbol = "ww_entries";
inline constexpr const char* kCpuEntryCountSymbol = "ww_entry_count";
inline constexpr const char* kCpuAbiSymbol = "ww_abi_version";

// The functions to compile: the entries, the start function and every
// function a reference can name (element segments, ref.func, globals),
// closed over direct calls. Indexed by defined function.
// `referenced` (optional, by module function index): the functions a
// reference can name, which only a call_indirect can call.
std::vector<bool> reachable_functions(const CompiledModule& cm, const std::vector<uint32_t>& entries,
                                      std::vector<bool>* referenced = nullptr);

Result<Generated> generate(const CompiledModule& cm, const Options& opts);

}  // namespace ww::codegen
