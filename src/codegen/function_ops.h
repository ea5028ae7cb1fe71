// A function's bytecode decoded op by op, and which frame slots each op
// reads and writes: what the generator's analyses walk.
#pragma once

#include <cstdint>
#include <vector>

#include "bytecode/ops.h"
#include "common/result.h"
#include "runtime/runtime.h"

namespace ww::codegen {

struct DecodedOp {
  BcDecoded d;
  uint32_t pc = 0;  // word offset from the function's first word
};

Result<std::vector<DecodedOp>> decode_function(const BytecodeModule& bc, uint32_t def);

// The slots an op reads (as [first, first + count) ranges) and the one it
// writes without reading first (kDst ops' s0), or kNoSlot. Ops without
// kDst other than calls count as reading every slot operand they name.
inline constexpr uint32_t kNoSlot = ~0u;
struct SlotRange {
  uint32_t first, count;
};
struct SlotEffects {
  std::vector<SlotRange> reads;
  uint32_t writes = kNoSlot;
};
SlotEffects slot_effects(const Module& m, const DecodedOp& o, uint32_t func_index);

// Every branch target an op can jump to (word offsets in the function).
void branch_targets(const BytecodeModule& bc, const DecodedOp& o, std::vector<uint32_t>& out);
// Whether control can fall through to the next op.
bool falls_through(BcOp op);

// The slots a function's code names, ascending: its locals in generated
// code, and what a frame saved on leaving for the host holds.
std::vector<uint32_t> named_slots(const Module& m, const BytecodeModule& bc, uint32_t def,
                                  const std::vector<DecodedOp>& ops);

}  // namespace ww::codegen
