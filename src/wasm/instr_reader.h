// Reads one instruction (opcode + immediates) from a function body or a
// constant expression. Shared by the decoder (constant expressions), the
// validator and the translator, so immediates are decoded in exactly one
// place, driven by the Imm column of opcodes.def.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/byte_reader.h"
#include "common/result.h"
#include "wasm/opcodes.h"

namespace ww {

struct BlockType {
  enum Kind : uint8_t { Void, Value, Index } kind = Void;
  ValType type = ValType::I32;  // when kind == Value
  uint32_t index = 0;           // when kind == Index (a type index)
};

struct Instr {
  Opcode op = Opcode::Nop;
  uint64_t offset = 0;  // module offset of the opcode's first byte
  // Index immediates, by Imm kind:
  //   Label/Func/Local/Global/Table/Data/Elem/MemIdx: a
  //   CallIndirect: a = type index, b = table index
  //   MemoryInit: a = data index, b = memory index
  //   MemoryCopy: a = dst memory, b = src memory
  //   TableInit: a = elem index, b = table index
  //   TableCopy: a = dst table, b = src table
  //   Mem: a = alignment exponent, b = memory index (always 0), imm = offset
  //   MemLane: as Mem, and lane
  //   Lane: lane
  //   V128Const: bytes (little-endian); Shuffle: bytes (lane indices)
  //   LabelTable: targets (default last)
  uint32_t a = 0, b = 0;
  uint64_t imm = 0;                     // I32/I64 constants (sign-extended to 64 bits), F32/F64 bits, memarg offset
  BlockType block;                      // Block
  ValType ref_type = ValType::FuncRef;  // RefType
  std::vector<uint32_t> targets;        // LabelTable: n targets then the default
  std::vector<ValType> select_types;    // SelectT
  std::array<uint8_t, 16> bytes{};      // V128Const, Shuffle
  uint8_t lane = 0;                     // Lane, MemLane
};

// Bytes first..first+7 of a v128 immediate (little-endian) as one word:
// first 0 the low word, 8 the high one.
inline uint64_t v128_word(const std::array<uint8_t, 16>& bytes, int first) {
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = w << 8 | bytes[size_t(first + i)];
  return w;
}

// Reads the next instruction at `r`. Errors: "unexpected end",
// "illegal opcode" for unknown opcodes (0xFD's SIMD sub-opcodes included), LEB
// errors from ByteReader, "zero byte expected" for reserved memory/table
// index bytes, "malformed reference type".
Status read_instr(ByteReader& r, Instr& out);

// Reads a value type byte (v128 included).
Result<ValType> read_valtype(ByteReader& r);
Result<ValType> read_reftype(ByteReader& r);

}  // namespace ww
