// The arithmetic and traps of every WebAssembly numeric instruction, as
// plain inline functions that every backend (the CPU interpreter, the GPU
// interpreter, generated code) calls, so they cannot disagree.
//
// Naming: the wasm instruction name with '.' replaced by '_'. i32 values are
// uint32_t, i64 uint64_t, f32 float, f64 double; comparisons return 0/1 as
// uint32_t; trapping instructions return a TrapCode and write their result
// through `out` only when they return TrapCode::None.
//
// Must compile with g++ and with nvcc for the device: no host-only std::
// calls, only C math functions CUDA also provides on the device, and
// compiler builtins only behind !__CUDA_ARCH__. The build uses
// -ffp-contract=off, and nothing here may be fused into an FMA.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "semantics/hd.h"
#include "semantics/traps.h"

namespace ww::sem {

// ---------------------------------------------------------------- bit casts

WW_HD inline float f32_from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
WW_HD inline uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
WW_HD inline double f64_from_bits(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}
WW_HD inline uint64_t f64_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

inline constexpr uint32_t kF32CanonicalNaN = 0x7fc00000u;
inline constexpr uint64_t kF64CanonicalNaN = 0x7ff8000000000000ull;
inline constexpr uint32_t kF32SignBit = 0x80000000u;
inline constexpr uint64_t kF64SignBit = 0x8000000000000000ull;

// The spec lets an arithmetic instruction that produces a NaN return any
// arithmetic NaN, or the canonical NaN when its NaN inputs were canonical.
// The canonical NaN satisfies both cases, and hardware differs (x86 keeps
// an input's payload, NVIDIA GPUs return 0x7fffffff), so every backend
// returns the positive canonical NaN and they all agree bit for bit.
//
// NaN results are rare, so the test is a branch the host compiler should
// predict, not a select: g++ turns `r != r ? C : r` into a cmov through
// an integer register, which puts two xmm<->gpr moves on every float
// dependency chain (bench/run-cpu.sh's float_bench on the compiled tier
// shows the cost).
#if defined(__CUDA_ARCH__)
#define WW_NAN_UNLIKELY(x) (x)
#else
#define WW_NAN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif
WW_HD inline float canon32(float r) {
  if (WW_NAN_UNLIKELY(r != r)) return f32_from_bits(kF32CanonicalNaN);
  return r;
}
WW_HD inline double canon64(double r) {
  if (WW_NAN_UNLIKELY(r != r)) return f64_from_bits(kF64CanonicalNaN);
  return r;
}

// ------------------------------------------------------------ i32 integers

WW_HD inline uint32_t i32_eqz(uint32_t a) { return a == 0; }
WW_HD inline uint32_t i32_eq(uint32_t a, uint32_t b) { return a == b; }
WW_HD inline uint32_t i32_ne(uint32_t a, uint32_t b) { return a != b; }
WW_HD inline uint32_t i32_lt_s(uint32_t a, uint32_t b) { return int32_t(a) < int32_t(b); }
WW_HD inline uint32_t i32_lt_u(uint32_t a, uint32_t b) { return a < b; }
WW_HD inline uint32_t i32_gt_s(uint32_t a, uint32_t b) { return int32_t(a) > int32_t(b); }
WW_HD inline uint32_t i32_gt_u(uint32_t a, uint32_t b) { return a > b; }
WW_HD inline uint32_t i32_le_s(uint32_t a, uint32_t b) { return int32_t(a) <= int32_t(b); }
WW_HD inline uint32_t i32_le_u(uint32_t a, uint32_t b) { return a <= b; }
WW_HD inline uint32_t i32_ge_s(uint32_t a, uint32_t b) { return int32_t(a) >= int32_t(b); }
WW_HD inline uint32_t i32_ge_u(uint32_t a, uint32_t b) { return a >= b; }

// The builtins are undefined for 0, the wasm instructions are not.
WW_HD inline uint32_t i32_clz(uint32_t a) {
#ifdef __CUDA_ARCH__
  return uint32_t(__clz(int(a)));
#else
  return a == 0 ? 32u : uint32_t(__builtin_clz(a));
#endif
}
WW_HD inline uint32_t i32_ctz(uint32_t a) {
#ifdef __CUDA_ARCH__
  return a == 0 ? 32u : uint32_t(__ffs(int(a)) - 1);
#else
  return a == 0 ? 32u : uint32_t(__builtin_ctz(a));
#endif
}
WW_HD inline uint32_t i32_popcnt(uint32_t a) {
#ifdef __CUDA_ARCH__
  return uint32_t(__popc(a));
#else
  return uint32_t(__builtin_popcount(a));
#endif
}

// Unsigned arithmetic wraps modulo 2^32 as wasm requires; signed would be UB.
WW_HD inline uint32_t i32_add(uint32_t a, uint32_t b) { return a + b; }
WW_HD inline uint32_t i32_sub(uint32_t a, uint32_t b) { return a - b; }
WW_HD inline uint32_t i32_mul(uint32_t a, uint32_t b) { return a * b; }
WW_HD inline uint32_t i32_and(uint32_t a, uint32_t b) { return a & b; }
WW_HD inline uint32_t i32_or(uint32_t a, uint32_t b) { return a | b; }
WW_HD inline uint32_t i32_xor(uint32_t a, uint32_t b) { return a ^ b; }

WW_HD inline TrapCode i32_div_s(uint32_t a, uint32_t b, uint32_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  // INT_MIN / -1 = 2^31 is not representable.
  if (a == 0x80000000u && b == 0xffffffffu) return TrapCode::IntegerOverflow;
  *out = uint32_t(int32_t(a) / int32_t(b));
  return TrapCode::None;
}
WW_HD inline TrapCode i32_div_u(uint32_t a, uint32_t b, uint32_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  *out = a / b;
  return TrapCode::None;
}
WW_HD inline TrapCode i32_rem_s(uint32_t a, uint32_t b, uint32_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  // INT_MIN rem -1 is 0 in wasm, but the C expression overflows (and traps
  // on x86), so x rem -1 is answered without dividing.
  *out = b == 0xffffffffu ? 0u : uint32_t(int32_t(a) % int32_t(b));
  return TrapCode::None;
}
WW_HD inline TrapCode i32_rem_u(uint32_t a, uint32_t b, uint32_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  *out = a % b;
  return TrapCode::None;
}

// Shift counts are taken modulo the bit width.
WW_HD inline uint32_t i32_shl(uint32_t a, uint32_t b) { return a << (b & 31); }
WW_HD inline uint32_t i32_shr_s(uint32_t a, uint32_t b) { return uint32_t(int32_t(a) >> (b & 31)); }
WW_HD inline uint32_t i32_shr_u(uint32_t a, uint32_t b) { return a >> (b & 31); }
WW_HD inline uint32_t i32_rotl(uint32_t a, uint32_t b) { return (a << (b & 31)) | (a >> ((32 - b) & 31)); }
WW_HD inline uint32_t i32_rotr(uint32_t a, uint32_t b) { return (a >> (b & 31)) | (a << ((32 - b) & 31)); }

// ------------------------------------------------------------ i64 integers

WW_HD inline uint32_t i64_eqz(uint64_t a) { return a == 0; }
WW_HD inline uint32_t i64_eq(uint64_t a, uint64_t b) { return a == b; }
WW_HD inline uint32_t i64_ne(uint64_t a, uint64_t b) { return a != b; }
WW_HD inline uint32_t i64_lt_s(uint64_t a, uint64_t b) { return int64_t(a) < int64_t(b); }
WW_HD inline uint32_t i64_lt_u(uint64_t a, uint64_t b) { return a < b; }
WW_HD inline uint32_t i64_gt_s(uint64_t a, uint64_t b) { return int64_t(a) > int64_t(b); }
WW_HD inline uint32_t i64_gt_u(uint64_t a, uint64_t b) { return a > b; }
WW_HD inline uint32_t i64_le_s(uint64_t a, uint64_t b) { return int64_t(a) <= int64_t(b); }
WW_HD inline uint32_t i64_le_u(uint64_t a, uint64_t b) { return a <= b; }
WW_HD inline uint32_t i64_ge_s(uint64_t a, uint64_t b) { return int64_t(a) >= int64_t(b); }
WW_HD inline uint32_t i64_ge_u(uint64_t a, uint64_t b) { return a >= b; }

WW_HD inline uint64_t i64_clz(uint64_t a) {
#ifdef __CUDA_ARCH__
  return uint64_t(__clzll((long long)a));
#else
  return a == 0 ? 64u : uint64_t(__builtin_clzll(a));
#endif
}
WW_HD inline uint64_t i64_ctz(uint64_t a) {
#ifdef __CUDA_ARCH__
  return a == 0 ? 64u : uint64_t(__ffsll((long long)a) - 1);
#else
  return a == 0 ? 64u : uint64_t(__builtin_ctzll(a));
#endif
}
WW_HD inline uint64_t i64_popcnt(uint64_t a) {
#ifdef __CUDA_ARCH__
  return uint64_t(__popcll(a));
#else
  return uint64_t(__builtin_popcountll(a));
#endif
}

WW_HD inline uint64_t i64_add(uint64_t a, uint64_t b) { return a + b; }
WW_HD inline uint64_t i64_sub(uint64_t a, uint64_t b) { return a - b; }
WW_HD inline uint64_t i64_mul(uint64_t a, uint64_t b) { return a * b; }
WW_HD inline uint64_t i64_and(uint64_t a, uint64_t b) { return a & b; }
WW_HD inline uint64_t i64_or(uint64_t a, uint64_t b) { return a | b; }
WW_HD inline uint64_t i64_xor(uint64_t a, uint64_t b) { return a ^ b; }

WW_HD inline TrapCode i64_div_s(uint64_t a, uint64_t b, uint64_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  if (a == 0x8000000000000000ull && b == ~0ull) return TrapCode::IntegerOverflow;
  *out = uint64_t(int64_t(a) / int64_t(b));
  return TrapCode::None;
}
WW_HD inline TrapCode i64_div_u(uint64_t a, uint64_t b, uint64_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  *out = a / b;
  return TrapCode::None;
}
WW_HD inline TrapCode i64_rem_s(uint64_t a, uint64_t b, uint64_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  *out = b == ~0ull ? 0u : uint64_t(int64_t(a) % int64_t(b));
  return TrapCode::None;
}
WW_HD inline TrapCode i64_rem_u(uint64_t a, uint64_t b, uint64_t* out) {
  if (b == 0) return TrapCode::IntegerDivideByZero;
  *out = a % b;
  return TrapCode::None;
}

WW_HD inline uint64_t i64_shl(uint64_t a, uint64_t b) { return a << (b & 63); }
WW_HD inline uint64_t i64_shr_s(uint64_t a, uint64_t b) { return uint64_t(int64_t(a) >> (b & 63)); }
WW_HD inline uint64_t i64_shr_u(uint64_t a, uint64_t b) { return a >> (b & 63); }
WW_HD inline uint64_t i64_rotl(uint64_t a, uint64_t b) { return (a << (b & 63)) | (a >> ((64 - b) & 63)); }
WW_HD inline uint64_t i64_rotr(uint64_t a, uint64_t b) { return (a >> (b & 63)) | (a << ((64 - b) & 63)); }

// ------------------------------------------------------------------- floats

WW_HD inline uint32_t f32_eq(float a, float b) { return a == b; }
WW_HD inline uint32_t f32_ne(float a, float b) { return a != b; }
WW_HD inline uint32_t f32_lt(float a, float b) { return a < b; }
WW_HD inline uint32_t f32_gt(float a, float b) { return a > b; }
WW_HD inline uint32_t f32_le(float a, float b) { return a <= b; }
WW_HD inline uint32_t f32_ge(float a, float b) { return a >= b; }
WW_HD inline uint32_t f64_eq(double a, double b) { return a == b; }
WW_HD inline uint32_t f64_ne(double a, double b) { return a != b; }
WW_HD inline uint32_t f64_lt(double a, double b) { return a < b; }
WW_HD inline uint32_t f64_gt(double a, double b) { return a > b; }
WW_HD inline uint32_t f64_le(double a, double b) { return a <= b; }
WW_HD inline uint32_t f64_ge(double a, double b) { return a >= b; }

// abs, neg and copysign are bit operations in the spec: they change only the
// sign bit, also of NaNs, whose payload must survive unchanged.
WW_HD inline float f32_abs(float a) { return f32_from_bits(f32_bits(a) & ~kF32SignBit); }
WW_HD inline float f32_neg(float a) { return f32_from_bits(f32_bits(a) ^ kF32SignBit); }
WW_HD inline float f32_copysign(float a, float b) {
  return f32_from_bits((f32_bits(a) & ~kF32SignBit) | (f32_bits(b) & kF32SignBit));
}
WW_HD inline double f64_abs(double a) { return f64_from_bits(f64_bits(a) & ~kF64SignBit); }
WW_HD inline double f64_neg(double a) { return f64_from_bits(f64_bits(a) ^ kF64SignBit); }
WW_HD inline double f64_copysign(double a, double b) {
  return f64_from_bits((f64_bits(a) & ~kF64SignBit) | (f64_bits(b) & kF64SignBit));
}

// The arithmetic that can make a NaN, in two forms: NAME_raw is the
// hardware's result (a NaN's payload is whatever the hardware makes), NAME
// canonicalizes it. ops.def writes every such op as raw arithmetic plus a
// canonicalizing slot write (WF32C/WF64C), so compiled code can leave the
// canonicalization out where no later op can see a NaN's bits (the
// generator's NaN-blind slots): a NaN's payload never changes whether an
// arithmetic result is a NaN.
#define WW_SEM_BINARY(NAME, T, CANON, OP)                \
  WW_HD inline T NAME##_raw(T a, T b) { return a OP b; } \
  WW_HD inline T NAME(T a, T b) { return CANON(NAME##_raw(a, b)); }
#define WW_SEM_UNARY(NAME, T, CANON, FN)           \
  WW_HD inline T NAME##_raw(T a) { return FN(a); } \
  WW_HD inline T NAME(T a) { return CANON(NAME##_raw(a)); }

WW_SEM_BINARY(f32_add, float, canon32, +)
WW_SEM_BINARY(f32_sub, float, canon32, -)
WW_SEM_BINARY(f32_mul, float, canon32, *)
WW_SEM_BINARY(f32_div, float, canon32, /)
WW_SEM_BINARY(f64_add, double, canon64, +)
WW_SEM_BINARY(f64_sub, double, canon64, -)
WW_SEM_BINARY(f64_mul, double, canon64, *)
WW_SEM_BINARY(f64_div, double, canon64, /)

// sqrtf/ceilf/floorf/truncf are exact (correctly rounded) on the host and,
// without -use_fast_math, on the device. rint rounds half to even in the
// default rounding mode, which is what wasm's nearest means; nothing in
// wasmwarp changes the rounding mode.
WW_SEM_UNARY(f32_sqrt, float, canon32, sqrtf)
WW_SEM_UNARY(f32_ceil, float, canon32, ceilf)
WW_SEM_UNARY(f32_floor, float, canon32, floorf)
WW_SEM_UNARY(f32_trunc, float, canon32, truncf)
WW_SEM_UNARY(f32_nearest, float, canon32, rintf)
WW_SEM_UNARY(f64_sqrt, double, canon64, sqrt)
WW_SEM_UNARY(f64_ceil, double, canon64, ceil)
WW_SEM_UNARY(f64_floor, double, canon64, floor)
WW_SEM_UNARY(f64_trunc, double, canon64, trunc)
WW_SEM_UNARY(f64_nearest, double, canon64, rint)
#undef WW_SEM_BINARY
#undef WW_SEM_UNARY

// wasm min/max differ from C's fmin/fmax and from x86 minss: any NaN
// operand gives a NaN, and -0 is smaller than +0. Equal operands can only
// differ in the sign of zero, so OR/AND of the bits picks -0 / +0.
WW_HD inline float f32_min(float a, float b) {
  if (a != a || b != b) return f32_from_bits(kF32CanonicalNaN);
  if (a == b) return f32_from_bits(f32_bits(a) | f32_bits(b));
  return a < b ? a : b;
}
WW_HD inline float f32_max(float a, float b) {
  if (a != a || b != b) return f32_from_bits(kF32CanonicalNaN);
  if (a == b) return f32_from_bits(f32_bits(a) & f32_bits(b));
  return a > b ? a : b;
}
WW_HD inline double f64_min(double a, double b) {
  if (a != a || b != b) return f64_from_bits(kF64CanonicalNaN);
  if (a == b) return f64_from_bits(f64_bits(a) | f64_bits(b));
  return a < b ? a : b;
}
WW_HD inline double f64_max(double a, double b) {
  if (a != a || b != b) return f64_from_bits(kF64CanonicalNaN);
  if (a == b) return f64_from_bits(f64_bits(a) & f64_bits(b));
  return a > b ? a : b;
}

// -------------------------------------------------------------- conversions

WW_HD inline uint32_t i32_wrap_i64(uint64_t a) { return uint32_t(a); }
WW_HD inline uint64_t i64_extend_i32_s(uint32_t a) { return uint64_t(int64_t(int32_t(a))); }
WW_HD inline uint64_t i64_extend_i32_u(uint32_t a) { return a; }

WW_HD inline uint32_t i32_extend8_s(uint32_t a) { return uint32_t(int32_t(int8_t(uint8_t(a)))); }
WW_HD inline uint32_t i32_extend16_s(uint32_t a) { return uint32_t(int32_t(int16_t(uint16_t(a)))); }
WW_HD inline uint64_t i64_extend8_s(uint64_t a) { return uint64_t(int64_t(int8_t(uint8_t(a)))); }
WW_HD inline uint64_t i64_extend16_s(uint64_t a) { return uint64_t(int64_t(int16_t(uint16_t(a)))); }
WW_HD inline uint64_t i64_extend32_s(uint64_t a) { return uint64_t(int64_t(int32_t(uint32_t(a)))); }

// Float -> integer truncation. Each range test is written against the first
// value that is out of range on each side, which is exactly representable
// as a float of the source type (a power of two, or a power of two minus
// one for the f64 -> i32 lower bounds), so the comparison is exact. Inside
// the range the C conversion is defined (it truncates toward zero), and the
// wasm result is that truncation.
#define WW_SEM_TRUNC(NAME, FT, IT, UT, LO_OK, HI)                  \
  WW_HD inline TrapCode NAME(FT a, UT* out) {                      \
    if (a != a) return TrapCode::InvalidConversionToInteger;       \
    if (!(LO_OK) || !(a < (HI))) return TrapCode::IntegerOverflow; \
    *out = UT(IT(a));                                              \
    return TrapCode::None;                                         \
  }
WW_SEM_TRUNC(i32_trunc_f32_s, float, int32_t, uint32_t, a >= -2147483648.0f, 2147483648.0f)
WW_SEM_TRUNC(i32_trunc_f32_u, float, uint32_t, uint32_t, a > -1.0f, 4294967296.0f)
WW_SEM_TRUNC(i32_trunc_f64_s, double, int32_t, uint32_t, a > -2147483649.0, 2147483648.0)
WW_SEM_TRUNC(i32_trunc_f64_u, double, uint32_t, uint32_t, a > -1.0, 4294967296.0)
WW_SEM_TRUNC(i64_trunc_f32_s, float, int64_t, uint64_t, a >= -9223372036854775808.0f, 9223372036854775808.0f)
WW_SEM_TRUNC(i64_trunc_f32_u, float, uint64_t, uint64_t, a > -1.0f, 18446744073709551616.0f)
WW_SEM_TRUNC(i64_trunc_f64_s, double, int64_t, uint64_t, a >= -9223372036854775808.0, 9223372036854775808.0)
WW_SEM_TRUNC(i64_trunc_f64_u, double, uint64_t, uint64_t, a > -1.0, 18446744073709551616.0)
#undef WW_SEM_TRUNC

// Saturating truncation (nontrapping-float-to-int): NaN -> 0, out of range
// -> the nearest bound.
#define WW_SEM_TRUNC_SAT(NAME, FT, IT, UT, LO_OK, HI, MINV, MAXV) \
  WW_HD inline UT NAME(FT a) {                                    \
    if (a != a) return 0;                                         \
    if (!(LO_OK)) return UT(MINV);                                \
    if (!(a < (HI))) return UT(MAXV);                             \
    return UT(IT(a));                                             \
  }
WW_SEM_TRUNC_SAT(i32_trunc_sat_f32_s, float, int32_t, uint32_t, a >= -2147483648.0f, 2147483648.0f, 0x80000000u,
                 0x7fffffffu)
WW_SEM_TRUNC_SAT(i32_trunc_sat_f32_u, float, uint32_t, uint32_t, a > -1.0f, 4294967296.0f, 0u, 0xffffffffu)
WW_SEM_TRUNC_SAT(i32_trunc_sat_f64_s, double, int32_t, uint32_t, a > -2147483649.0, 2147483648.0, 0x80000000u,
                 0x7fffffffu)
WW_SEM_TRUNC_SAT(i32_trunc_sat_f64_u, double, uint32_t, uint32_t, a > -1.0, 4294967296.0, 0u, 0xffffffffu)
WW_SEM_TRUNC_SAT(i64_trunc_sat_f32_s, float, int64_t, uint64_t, a >= -9223372036854775808.0f, 9223372036854775808.0f,
                 0x8000000000000000ull, 0x7fffffffffffffffull)
WW_SEM_TRUNC_SAT(i64_trunc_sat_f32_u, float, uint64_t, uint64_t, a > -1.0f, 18446744073709551616.0f, 0ull, ~0ull)
WW_SEM_TRUNC_SAT(i64_trunc_sat_f64_s, double, int64_t, uint64_t, a >= -9223372036854775808.0, 9223372036854775808.0,
                 0x8000000000000000ull, 0x7fffffffffffffffull)
WW_SEM_TRUNC_SAT(i64_trunc_sat_f64_u, double, uint64_t, uint64_t, a > -1.0, 18446744073709551616.0, 0ull, ~0ull)
#undef WW_SEM_TRUNC_SAT

// Integer -> float conversions round to nearest, ties to even, once. The
// direct C conversions do exactly that on x86-64 (g++ emits a sticky-bit
// sequence for u64) and on the device (cvt.rn); going through double first
// would round twice and break cases in conversions.wast such as
// f32.convert_i64_u(0x0020000020000001).
WW_HD inline float f32_convert_i32_s(uint32_t a) { return float(int32_t(a)); }
WW_HD inline float f32_convert_i32_u(uint32_t a) { return float(a); }
WW_HD inline float f32_convert_i64_s(uint64_t a) { return float(int64_t(a)); }
WW_HD inline float f32_convert_i64_u(uint64_t a) { return float(a); }
WW_HD inline double f64_convert_i32_s(uint32_t a) { return double(int32_t(a)); }
WW_HD inline double f64_convert_i32_u(uint32_t a) { return double(a); }
WW_HD inline double f64_convert_i64_s(uint64_t a) { return double(int64_t(a)); }
WW_HD inline double f64_convert_i64_u(uint64_t a) { return double(a); }

WW_HD inline float f32_demote_f64(double a) { return canon32(float(a)); }
WW_HD inline double f64_promote_f32(float a) { return canon64(double(a)); }

WW_HD inline uint32_t i32_reinterpret_f32(float a) { return f32_bits(a); }
WW_HD inline uint64_t i64_reinterpret_f64(double a) { return f64_bits(a); }
WW_HD inline float f32_reinterpret_i32(uint32_t a) { return f32_from_bits(a); }
WW_HD inline double f64_reinterpret_i64(uint64_t a) { return f64_from_bits(a); }

// ------------------------------------------------------------------- memory

// An access of `size` bytes at effective address addr + offset traps when
// any byte lies past the end. addr and offset are below 2^32 (memory32),
// so the sum cannot overflow 64 bits.
WW_HD inline bool mem_oob(uint64_t addr, uint64_t offset, uint32_t size, uint64_t mem_size) {
  return addr + offset + size > mem_size;
}

// wasm memory is little-endian, as are x86-64 and NVIDIA GPUs, so a memcpy
// is the load; memcpy also makes unaligned accesses well-defined.
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "wasmwarp assumes a little-endian host");
#endif
WW_HD inline uint8_t load8(const uint8_t* p) { return *p; }
WW_HD inline uint16_t load16(const uint8_t* p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
WW_HD inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
WW_HD inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
WW_HD inline void store8(uint8_t* p, uint8_t v) { *p = v; }
WW_HD inline void store16(uint8_t* p, uint16_t v) { memcpy(p, &v, 2); }
WW_HD inline void store32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
WW_HD inline void store64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }

}  // namespace ww::sem
