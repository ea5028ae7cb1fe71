// Translation of validated WebAssembly into wasmwarp's register bytecode, in
// two passes: the prep pass (manifests, call graph, recursive groups) and
// the emission pass (bytecode). The result is position independent (indices
// and word offsets only, no host pointers), so it is copied as it is into
// GPU memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bytecode/bytecode.h"
#include "common/result.h"
#include "decode/module.h"

namespace ww {

struct TranslateOptions {
  // Frames larger than this many 64-bit slots are rejected: the operand
  // encoding holds slot numbers in 16 bits.
  uint32_t max_frame_slots = 65535;
};

// What the prep pass knows about one defined function.
struct FunctionManifest {
  uint32_t func_index = 0;  // in the module's whole function index space
  uint32_t type_index = 0;
  uint32_t num_params = 0;
  uint32_t num_results = 0;
  uint32_t num_locals = 0;        // params + declared locals
  uint32_t max_stack = 0;         // maximum operand-stack height
  uint32_t frame_slots = 0;       // num_locals + max_stack (+ scratch), in 64-bit slots
  std::vector<uint32_t> callees;  // direct callees (function indices), sorted, unique
  bool calls_indirect = false;
};

struct CallGraph {
  // Strongly connected components of the direct-call graph over all
  // functions (imports are leaves), in reverse topological order.
  std::vector<std::vector<uint32_t>> sccs;
  // The SCCs that form cycles: more than one function, or one that calls
  // itself. Each is sorted by function index.
  std::vector<std::vector<uint32_t>> recursive_groups;
};

struct TranslatedModule {
  BytecodeModule bytecode;
  std::vector<FunctionManifest> manifests;  // one per defined function
  CallGraph call_graph;
};

Result<TranslatedModule> translate_module(const Module& m, const TranslateOptions& opts = {});

// "recursion not supported: functions F, G form a cycle" for the first
// recursive group, or Ok.
Status check_no_recursion(const Module& m, const CallGraph& g);

// What a call of any of `entries` can take of the interpreter's stack at
// most: 64-bit frame slots (physical, as FunctionCode::frame_slots) and
// nested calls to defined functions below the entry's own frame. None when
// a cycle or a call_indirect is reachable, which leaves it unbounded.
struct StackBound {
  uint64_t slots = 0;
  uint32_t depth = 0;
};
std::optional<StackBound> stack_bound(const Module& m, const TranslatedModule& tm,
                                      const std::vector<uint32_t>& entries);

}  // namespace ww
