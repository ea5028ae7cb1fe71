// The accessors of ops.def's handler bodies that both interpreters define
// the same way. An interpreter includes this after defining SLOT(s) (a
// reference to 64-bit frame slot s of the current frame) and before
// expanding ops.def; the handlers also expect a TrapCode `trap` and a label
// `trapped`. Generated code has its own TRAP (codegen/rt/ww_rt.h).
#pragma once

#include "bytecode/slot_accessors.h"

#define TRAP(name)         \
  do {                     \
    trap = TrapCode::name; \
    goto trapped;          \
  } while (0)
#define TRAP_IF(expr)            \
  do {                           \
    TrapCode tc_ = (expr);       \
    if (tc_ != TrapCode::None) { \
      trap = tc_;                \
      goto trapped;              \
    }                            \
  } while (0)
