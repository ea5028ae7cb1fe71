// How ops.def's handler bodies read and write frame slots, for every
// backend and tier: the includer defines SLOT(s) as a 64-bit lvalue (the
// interpreters: a frame entry; generated code: a local variable).
#pragma once

#define R32(s) uint32_t(SLOT(s))
#define R64(s) SLOT(s)
#define RF32(s) sem::f32_from_bits(uint32_t(SLOT(s)))
#define RF64(s) sem::f64_from_bits(SLOT(s))
#define W32(s, v) (SLOT(s) = uint64_t(uint32_t(v)))
#define W64(s, v) (SLOT(s) = uint64_t(v))
#define WF32(s, v) (SLOT(s) = uint64_t(sem::f32_bits(v)))
#define WF64(s, v) (SLOT(s) = sem::f64_bits(v))
// The write of an arithmetic result that may be a NaN: canonicalized. The
// compiled tier writes it raw where no op can observe the NaN's bits.
#define WF32C(s, v) WF32(s, sem::canon32(v))
#define WF64C(s, v) WF64(s, sem::canon64(v))
// A v128: slots s (low word) and s + 1 (high word). The value is read
// whole before the write, so s0 may alias an input.
#define RV128(s) ::ww::sem::v128_of(SLOT(s), SLOT((s) + 1))
#define WV128(s, v)                     \
  do {                                  \
    const ::ww::sem::V128 wv128_ = (v); \
    SLOT(s) = wv128_.lo;                \
    SLOT((s) + 1) = wv128_.hi;          \
  } while (0)
