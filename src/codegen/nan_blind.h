// Where compiled code may leave a NaN uncanonicalized. An arithmetic result
// (ops.def's WF32C/WF64C) can be written as the hardware made it when every
// op its value reaches, before the slot is written again, reads it through
// a kNanBlind op (arithmetic, comparisons, conversions): those ops' results
// depend on whether an operand is a NaN, never on its bits, so the
// canonicalization would change nothing anyone can observe. Stores,
// reinterprets, abs/neg/copysign, moves, calls and returns observe the bits
// and keep it. On the GPU this halves the instructions of float code (each
// canonicalization is a compare and a select).
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/function_ops.h"

namespace ww::codegen {

// Per op of `ops`: true when its WF32C/WF64C may be a raw write. Functions
// larger than kMaxOpsForNanAnalysis keep every canonicalization.
inline constexpr size_t kMaxOpsForNanAnalysis = 20000;
std::vector<bool> raw_float_writes(const Module& m, const BytecodeModule& bc, const std::vector<DecodedOp>& ops,
                                   uint32_t func_index);

}  // namespace ww::codegen
