// The Opcode enum and per-opcode facts, generated from opcodes.def.
#pragma once

#include <cstdint>

#include "wasm/types.h"

namespace ww {

// Kinds of immediates that follow an opcode in the binary format.
enum class Imm : uint8_t {
  None,
  Block,         // block type: empty, a value type, or a type index (s33)
  Label,         // label index
  LabelTable,    // vec(label) + default label
  Func,          // function index
  CallIndirect,  // type index, table index
  SelectT,       // vec(valtype)
  Local,         // local index
  Global,        // global index
  Table,         // table index
  Mem,           // memarg: align (log2), offset
  MemIdx,        // memory index (must be the byte 0x00 in 2.0)
  I32,           // s32
  I64,           // s64
  F32,           // 4 raw bytes
  F64,           // 8 raw bytes
  RefType,       // heap type byte (funcref / externref)
  MemoryInit,    // data index, memory index
  Data,          // data index
  MemoryCopy,    // memory index, memory index
  TableInit,     // elem index, table index
  Elem,          // elem index
  TableCopy,     // dst table index, src table index
  V128Const,     // 16 raw bytes, little-endian
  Shuffle,       // 16 lane-index bytes, each < 32
  Lane,          // one lane-index byte
  MemLane,       // memarg, then one lane-index byte
};

enum class Opcode : uint16_t {
#define WASM_OP(Name, prefix, code, text, imm, r, p1, p2, p3, mem) Name,
#include "wasm/opcodes.def"
#undef WASM_OP
  Count
};

inline constexpr int kOpcodeCount = static_cast<int>(Opcode::Count);

// Type slot in the table: a value type, or none.
enum class OpType : uint8_t { ___, I32, I64, F32, F64, V128 };

struct OpcodeInfo {
  const char* name;
  uint8_t prefix;  // 0, 0xFC or 0xFD
  uint32_t code;
  Imm imm;
  OpType result, p1, p2, p3;
  uint8_t mem_size;
};

const OpcodeInfo& opcode_info(Opcode op);
inline const char* opcode_name(Opcode op) { return opcode_info(op).name; }

// "Simple" instructions are those whose type is fully given by their row.
bool is_simple(Opcode op);

// Looks up a single-byte opcode or an 0xFC- or 0xFD-prefixed one; returns
// false when the byte sequence names no opcode of the supported set.
bool lookup_opcode(uint8_t prefix, uint32_t code, Opcode* out);

inline bool optype_to_valtype(OpType t, ValType* out) {
  switch (t) {
    case OpType::I32: *out = ValType::I32; return true;
    case OpType::I64: *out = ValType::I64; return true;
    case OpType::F32: *out = ValType::F32; return true;
    case OpType::F64: *out = ValType::F64; return true;
    case OpType::V128: *out = ValType::V128; return true;
    case OpType::___: return false;
  }
  return false;
}

// The bound of a SIMD instruction's lane-index immediate: the lanes of its
// shape (i8x16: 16 ... f64x2: 2) for Lane, 16 bytes over the access width
// for MemLane, 32 for Shuffle (two vectors' bytes); 0 for the rest.
uint32_t simd_lanes(Opcode op);

}  // namespace ww
