// Every bytecode op's handler body as a template for generated code, read
// from bytecode/ops.def itself (the X-macro stringifies each body), so an
// op's meaning is written once for the interpreters and the compiled tier.
// A template is the body's text cut at its operands: slot and immediate
// names, branch targets (JUMP) and 64-bit constants (CONST64), which the
// generator fills in for each occurrence of the op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bytecode/ops.h"

namespace ww::codegen {

struct TemplatePiece {
  // CanonWrite: WF32C/WF64C, the canonicalizing write of an arithmetic
  // result, which the generator may emit as the raw WF32/WF64.
  // SlotHi: the slot after s<index> (a v128's high word); Const64Hi: the
  // constant after the one i<index> names.
  enum Kind : uint8_t { Text, Slot, SlotHi, Imm, Jump, Const64, Const64Hi, CanonWrite } kind = Text;
  std::string text;   // Text, CanonWrite (the accessor's name)
  uint8_t index = 0;  // s<index> / i<index>
};

struct OpTemplate {
  std::vector<TemplatePiece> pieces;
  bool traps = false;  // the body can trap (TRAP / TRAP_IF)
  bool jumps = false;  // the body branches (JUMP)
  // The op is control flow or a call, which the generator writes itself
  // (br_table, return, call, call_import, call_indirect).
  bool special = false;
};

// The template of each op, indexed by BcOp.
const std::vector<OpTemplate>& op_templates();

// The raw body text of an op, as ops.def has it.
const char* op_body_text(BcOp op);

}  // namespace ww::codegen
