// The emitter's lookup tables over the bytecode op table (bytecode/ops.def)
// and its fusion table (bytecode/fusion.def): which bytecode op a wasm op
// lowers to one to one, which compare-and-branch a comparison folds into,
// and which ops have a form with an immediate right-hand side.
#pragma once

#include <algorithm>
#include <iterator>

#include "bytecode/ops.h"
#include "wasm/opcodes.h"

namespace ww::translate_detail {

inline constexpr BcOp kNoOp = BcOp::Count;

struct OpTables {
  BcOp simple[kOpcodeCount];   // wasm op -> bytecode op, one to one
  BcOp if_op[kBcOpCount];      // comparison -> compare-and-branch when true
  BcOp unless_op[kBcOpCount];  // comparison -> compare-and-branch when false
  BcOp imm_form[kBcOpCount];   // i32 op -> its form with an immediate rhs

  OpTables() {
    std::fill(std::begin(simple), std::end(simple), kNoOp);
    std::fill(std::begin(if_op), std::end(if_op), kNoOp);
    std::fill(std::begin(unless_op), std::end(unless_op), kNoOp);
    std::fill(std::begin(imm_form), std::end(imm_form), kNoOp);
#define WW_OP(Name, text, fmt, flags, ...)
#define WW_OPW(Name, text, fmt, flags, ...) simple[int(Opcode::Name)] = BcOp::Name;
#include "bytecode/ops.def"
#undef WW_OPW
#undef WW_OP
#define WW_FUSE_CMP(Cmp, BrIfCmp, BrUnlessCmp, CmpImm, BrIfImm, BrUnlessImm) \
  set_cmp(BcOp::Cmp, BcOp::BrIfCmp, BcOp::BrUnlessCmp);                      \
  imm_form[int(BcOp::Cmp)] = BcOp::CmpImm;                                   \
  set_cmp(BcOp::CmpImm, BcOp::BrIfImm, BcOp::BrUnlessImm);
#define WW_FUSE_CMP2(Cmp, BrIfCmp, BrUnlessCmp) set_cmp(BcOp::Cmp, BcOp::BrIfCmp, BcOp::BrUnlessCmp);
#define WW_FUSE_IMM(Op, OpImm) imm_form[int(BcOp::Op)] = BcOp::OpImm;
#include "bytecode/fusion.def"
#undef WW_FUSE_CMP
#undef WW_FUSE_CMP2
#undef WW_FUSE_IMM
    // Relaxed SIMD instructions whose deterministic outcome is a 2.0 op's
    // lower to that op (semantics/simd.h).
    simple[int(Opcode::I8x16RelaxedSwizzle)] = BcOp::I8x16Swizzle;
    simple[int(Opcode::I32x4RelaxedTruncF32x4S)] = BcOp::I32x4TruncSatF32x4S;
    simple[int(Opcode::I32x4RelaxedTruncF32x4U)] = BcOp::I32x4TruncSatF32x4U;
    simple[int(Opcode::I32x4RelaxedTruncF64x2SZero)] = BcOp::I32x4TruncSatF64x2SZero;
    simple[int(Opcode::I32x4RelaxedTruncF64x2UZero)] = BcOp::I32x4TruncSatF64x2UZero;
    for (Opcode op : {Opcode::I8x16RelaxedLaneselect, Opcode::I16x8RelaxedLaneselect, Opcode::I32x4RelaxedLaneselect,
                      Opcode::I64x2RelaxedLaneselect})
      simple[int(op)] = BcOp::V128Bitselect;
    simple[int(Opcode::F32x4RelaxedMin)] = BcOp::F32x4Min;
    simple[int(Opcode::F32x4RelaxedMax)] = BcOp::F32x4Max;
    simple[int(Opcode::F64x2RelaxedMin)] = BcOp::F64x2Min;
    simple[int(Opcode::F64x2RelaxedMax)] = BcOp::F64x2Max;
    simple[int(Opcode::I16x8RelaxedQ15mulrS)] = BcOp::I16x8Q15mulrSatS;
    // br_if (i32.eqz x) is br_unless x.
    set_cmp(BcOp::I32Eqz, BcOp::BrUnless, BcOp::BrIf);
    set_cmp(BcOp::I64Eqz, BcOp::BrIfI64Eqz, BcOp::BrUnlessI64Eqz);
  }
  void set_cmp(BcOp c, BcOp a, BcOp b) {
    if_op[int(c)] = a;
    unless_op[int(c)] = b;
  }
};

inline const OpTables& tables() {
  static const OpTables t;
  return t;
}

}  // namespace ww::translate_detail
