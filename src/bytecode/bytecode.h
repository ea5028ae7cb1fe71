// wasmwarp register bytecode: the one program form that every backend runs.
//
// Each function runs in a frame of 64-bit slots: params first, then declared
// locals, then the operand stack (the validator's stack height maps each
// operand to a fixed slot), then scratch. Ops name slots, never a stack
// pointer. Code is a stream of 32-bit words; wide immediates (64-bit
// constants) and br_table targets live in side tables indexed from the
// code. Nothing here is a host pointer, so the whole BytecodeModule is copied
// to GPU memory as it is. The op set is defined once in bytecode/ops.def.
#pragma once

#include <cstdint>
#include <vector>

#include "bytecode/function_code.h"

namespace ww {

struct BytecodeModule {
  std::vector<uint32_t> code;       // every defined function's words
  std::vector<uint64_t> consts;     // 64-bit immediates
  std::vector<uint32_t> br_tables;  // br_table target word offsets
  std::vector<FunctionCode> funcs;  // per defined function (index - imported funcs)
  // Slots per value: 2 in a module that holds v128 values anywhere (every
  // value then takes slots 2L and 2L + 1 for its logical slot L, a v128
  // both, anything else the first; parameters and results too), else 1.
  uint32_t slot_width = 1;

  size_t size_bytes() const {
    return code.size() * 4 + consts.size() * 8 + br_tables.size() * 4 + funcs.size() * sizeof(FunctionCode);
  }
};

}  // namespace ww
