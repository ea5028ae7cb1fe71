#include "wasm/opcodes.h"

#include <cstdlib>

namespace ww {

namespace {
constexpr OpcodeInfo kInfo[] = {
#define WASM_OP(Name, prefix, code, text, imm, r, p1, p2, p3, mem) \
  {text, prefix, code, Imm::imm, OpType::r, OpType::p1, OpType::p2, OpType::p3, mem},
#include "wasm/opcodes.def"
#undef WASM_OP
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == kOpcodeCount);

struct Tables {
  int16_t single[256];
  int16_t fc[32];
  int16_t fd[0x114];  // SIMD, relaxed SIMD (0x100-0x113) included
  Tables() {
    for (auto& v : single) v = -1;
    for (auto& v : fc) v = -1;
    for (auto& v : fd) v = -1;
    for (int i = 0; i < kOpcodeCount; ++i) {
      if (kInfo[i].prefix == 0) single[kInfo[i].code] = int16_t(i);
      else if (kInfo[i].prefix == 0xFC) fc[kInfo[i].code] = int16_t(i);
      else fd[kInfo[i].code] = int16_t(i);
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}
}  // namespace

const OpcodeInfo& opcode_info(Opcode op) { return kInfo[static_cast<int>(op)]; }

bool is_simple(Opcode op) {
  const OpcodeInfo& i = opcode_info(op);
  switch (i.imm) {
    case Imm::None:
    case Imm::Mem:
    case Imm::I32:
    case Imm::I64:
    case Imm::F32:
    case Imm::F64:
    case Imm::V128Const:
    case Imm::Shuffle:
    case Imm::Lane:
    case Imm::MemLane: return i.result != OpType::___ || i.p1 != OpType::___;
    default: return false;
  }
}

bool lookup_opcode(uint8_t prefix, uint32_t code, Opcode* out) {
  int idx = -1;
  if (prefix == 0) idx = code < 256 ? tables().single[code] : -1;
  else if (prefix == 0xFC) idx = code < 32 ? tables().fc[code] : -1;
  else if (prefix == 0xFD) idx = code < 0x114 ? tables().fd[code] : -1;
  if (idx < 0) return false;
  *out = static_cast<Opcode>(idx);
  return true;
}

uint32_t simd_lanes(Opcode op) {
  const OpcodeInfo& i = opcode_info(op);
  if (i.imm == Imm::Shuffle) return 32;
  if (i.imm == Imm::MemLane) return 16 / i.mem_size;
  if (i.imm != Imm::Lane) return 0;
  // "i8x16.extract_lane_s": the digits after the 'x'.
  const char* x = i.name + 2;
  while (*x && *x != 'x') ++x;
  return *x ? uint32_t(std::atoi(x + 1)) : 0;
}

}  // namespace ww
