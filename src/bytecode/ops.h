// The bytecode op enum, operand formats and encoder, generated from
// bytecode/ops.def. Device-visible parts (the enum, the format sizes and the
// WW_DEC_* decoders) are plain enough for nvcc.
//
// Encoding: the op word is opcode (low 16 bits) | s0 (high 16 bits). Further
// slot operands are packed two per word (s1 low, s2 high; s3 alone), then
// one word per 32-bit immediate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "semantics/hd.h"

namespace ww {

enum class BcOp : uint16_t {
#define WW_OP(Name, text, fmt, flags, ...) Name,
#include "bytecode/ops.def"
#undef WW_OP
  Count
};
inline constexpr int kBcOpCount = static_cast<int>(BcOp::Count);

// Operand formats: number of slot operands, then the immediates, where
// I = plain, T = branch target, K = consts index, B = br_tables start.
enum class BcFmt : uint8_t { N, S1, S2, S3, S4, I, T, S1I, S1K, S1T, S1B, S2I, S2T, S2II, S3I, S3II, S1IT };

enum BcFlags : uint8_t { kDst = 1, kNanBlind = 2 };

struct BcFmtInfo {
  uint8_t nslots;
  uint8_t nimms;
  char imm_kinds[3];  // 'I', 'T', 'K', 'B' (B: i0 = br_tables start, i1 = count)
  uint8_t words;
};

inline constexpr BcFmtInfo kBcFmtInfo[] = {
    {0, 0, {0, 0, 0}, 1},      // N
    {1, 0, {0, 0, 0}, 1},      // S1
    {2, 0, {0, 0, 0}, 2},      // S2
    {3, 0, {0, 0, 0}, 2},      // S3
    {4, 0, {0, 0, 0}, 3},      // S4
    {0, 1, {'I', 0, 0}, 2},    // I
    {0, 1, {'T', 0, 0}, 2},    // T
    {1, 1, {'I', 0, 0}, 2},    // S1I
    {1, 1, {'K', 0, 0}, 2},    // S1K
    {1, 1, {'T', 0, 0}, 2},    // S1T
    {1, 2, {'B', 'I', 0}, 3},  // S1B
    {2, 1, {'I', 0, 0}, 3},    // S2I
    {2, 1, {'T', 0, 0}, 3},    // S2T
    {2, 2, {'I', 'I', 0}, 4},  // S2II
    {3, 1, {'I', 0, 0}, 3},    // S3I
    {3, 2, {'I', 'I', 0}, 4},  // S3II
    {1, 2, {'I', 'T', 0}, 3},  // S1IT
};

struct BcOpInfo {
  const char* name;
  BcFmt fmt;
  uint8_t flags;
};

inline constexpr BcOpInfo kBcOpInfo[] = {
#define WW_OP(Name, text, fmt, flags, ...) {text, BcFmt::fmt, flags},
#include "bytecode/ops.def"
#undef WW_OP
};

inline const BcOpInfo& bc_op_info(BcOp op) { return kBcOpInfo[static_cast<int>(op)]; }
inline const BcFmtInfo& bc_fmt_info(BcFmt f) { return kBcFmtInfo[static_cast<int>(f)]; }
inline uint32_t bc_op_words(BcOp op) { return bc_fmt_info(bc_op_info(op).fmt).words; }

// Word index of the immediate i`k` within an op of format `f`.
inline uint32_t bc_imm_word(BcFmt f, uint32_t k) {
  const BcFmtInfo& fi = bc_fmt_info(f);
  return fi.words - fi.nimms + k;
}

// Appends one op. Unused operands are ignored; slot operands must fit in 16
// bits (the translator checks frame sizes before it relies on that).
inline void bc_emit(std::vector<uint32_t>& code, BcOp op, uint32_t s0 = 0, uint32_t s1 = 0, uint32_t s2 = 0,
                    uint32_t s3 = 0, uint32_t i0 = 0, uint32_t i1 = 0) {
  const BcFmtInfo& fi = bc_fmt_info(bc_op_info(op).fmt);
  code.push_back(static_cast<uint32_t>(op) | (fi.nslots >= 1 ? (s0 & 0xffffu) << 16 : 0u));
  if (fi.nslots == 2) code.push_back(s1 & 0xffffu);
  if (fi.nslots >= 3) code.push_back((s1 & 0xffffu) | ((s2 & 0xffffu) << 16));
  if (fi.nslots == 4) code.push_back(s3 & 0xffffu);
  if (fi.nimms >= 1) code.push_back(i0);
  if (fi.nimms >= 2) code.push_back(i1);
}

// Decoded operands of one op, for tools (the disassembler, tests).
struct BcDecoded {
  BcOp op = BcOp::Unreachable;
  uint32_t s[4] = {0, 0, 0, 0};
  uint32_t i[2] = {0, 0};
  uint32_t words = 1;
};

// Decodes the op at code[0..avail); false when the op is unknown or cut off.
inline bool bc_decode(const uint32_t* code, size_t avail, BcDecoded* out) {
  if (avail == 0) return false;
  uint32_t opn = code[0] & 0xffffu;
  if (opn >= static_cast<uint32_t>(kBcOpCount)) return false;
  out->op = static_cast<BcOp>(opn);
  const BcFmtInfo& fi = bc_fmt_info(bc_op_info(out->op).fmt);
  if (avail < fi.words) return false;
  out->words = fi.words;
  out->s[0] = code[0] >> 16;
  if (fi.nslots == 2) out->s[1] = code[1];
  if (fi.nslots >= 3) {
    out->s[1] = code[1] & 0xffffu;
    out->s[2] = code[1] >> 16;
  }
  if (fi.nslots == 4) out->s[3] = code[2];
  for (uint32_t k = 0; k < fi.nimms; ++k) out->i[k] = code[fi.words - fi.nimms + k];
  return true;
}

}  // namespace ww

// Operand decoders for handlers: declare s0.. and i0.. from the op at
// pointer P. Backends use them as WW_DEC_##Format(pc).
#define WW_DEC_N(P)
#define WW_DEC_S1(P) [[maybe_unused]] const uint32_t s0 = (P)[0] >> 16;
#define WW_DEC_S2(P) WW_DEC_S1(P) const uint32_t s1 = (P)[1];
#define WW_DEC_S3(P) WW_DEC_S1(P) const uint32_t s1 = (P)[1] & 0xffffu, s2 = (P)[1] >> 16;
#define WW_DEC_S4(P) WW_DEC_S3(P) const uint32_t s3 = (P)[2];
#define WW_DEC_I(P) const uint32_t i0 = (P)[1];
#define WW_DEC_T(P) WW_DEC_I(P)
#define WW_DEC_S1I(P) WW_DEC_S1(P) const uint32_t i0 = (P)[1];
#define WW_DEC_S1K(P) WW_DEC_S1I(P)
#define WW_DEC_S1T(P) WW_DEC_S1I(P)
#define WW_DEC_S1B(P) WW_DEC_S1I(P) const uint32_t i1 = (P)[2];
#define WW_DEC_S1IT(P) WW_DEC_S1B(P)
#define WW_DEC_S2I(P) WW_DEC_S2(P) const uint32_t i0 = (P)[2];
#define WW_DEC_S2T(P) WW_DEC_S2I(P)
#define WW_DEC_S2II(P) WW_DEC_S2I(P) const uint32_t i1 = (P)[3];
#define WW_DEC_S3I(P) WW_DEC_S3(P) const uint32_t i0 = (P)[2];
#define WW_DEC_S3II(P) WW_DEC_S3I(P) const uint32_t i1 = (P)[3];
// Words per format, for advancing the program counter.
#define WW_WORDS_N 1
#define WW_WORDS_S1 1
#define WW_WORDS_S2 2
#define WW_WORDS_S3 2
#define WW_WORDS_S4 3
#define WW_WORDS_I 2
#define WW_WORDS_T 2
#define WW_WORDS_S1I 2
#define WW_WORDS_S1K 2
#define WW_WORDS_S1T 2
#define WW_WORDS_S1B 3
#define WW_WORDS_S2I 3
#define WW_WORDS_S2T 3
#define WW_WORDS_S2II 4
#define WW_WORDS_S3I 3
#define WW_WORDS_S3II 4
#define WW_WORDS_S1IT 3
