// The accessors of ops.def's handler bodies that every backend defines the
// same way. A backend includes this after defining SLOT(s) (a reference to
// 64-bit frame slot s of the current frame) and before expanding ops.def;
// the handlers also expect a TrapCode `trap` and a label `trapped`.
#pragma once

#define R32(s) uint32_t(SLOT(s))
#define R64(s) SLOT(s)
#define RF32(s) sem::f32_from_bits(uint32_t(SLOT(s)))
#define RF64(s) sem::f64_from_bits(SLOT(s))
#define W32(s, v) (SLOT(s) = uint64_t(uint32_t(v)))
#define W64(s, v) (SLOT(s) = uint64_t(v))
#define WF32(s, v) (SLOT(s) = uint64_t(sem::f32_bits(v)))
#define WF64(s, v) (SLOT(s) = sem::f64_bits(v))
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
