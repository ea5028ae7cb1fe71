// Compiled, not run: semantics/simd.h must build as device code (nvcc, the
// flags of the GPU backend), since the GPU interpreter and generated GPU
// code include it. One call of every family of functions in it: the
// macro-made ones differ between shapes only in their types.
#include "semantics/simd.h"

namespace ww::sem {

__global__ void simd_device_check(V128* io, uint32_t* words) {
  const V128 a = io[0], b = io[1];
  V128 r = i8x16_add(a, b);
  r = v128_xor(r, i16x8_add_sat_s(a, b));
  r = v128_xor(r, i32x4_lt_u(a, b));
  r = v128_xor(r, i64x2_shr_s(a, words[0]));
  r = v128_xor(r, i8x16_swizzle(a, b));
  r = v128_xor(r, i8x16_shuffle(a, b, io[2]));
  r = v128_xor(r, v128_bitselect(a, b, io[2]));
  r = v128_xor(r, i8x16_popcnt(a));
  r = v128_xor(r, i16x8_q15mulr_sat_s(a, b));
  r = v128_xor(r, i32x4_dot_i16x8_s(a, b));
  r = v128_xor(r, i64x2_extmul_high_i32x4_u(a, b));
  r = v128_xor(r, i32x4_extadd_pairwise_i16x8_s(a));
  r = v128_xor(r, i16x8_narrow_i32x4_u(a, b));
  r = v128_xor(r, f32x4_add(a, b));
  r = v128_xor(r, f64x2_pmin(a, b));
  r = v128_xor(r, f32x4_nearest(a));
  r = v128_xor(r, f64x2_le(a, b));
  r = v128_xor(r, i32x4_trunc_sat_f32x4_u(a));
  r = v128_xor(r, i32x4_trunc_sat_f64x2_s_zero(a));
  r = v128_xor(r, f32x4_demote_f64x2_zero(a));
  r = v128_xor(r, f64x2_promote_low_f32x4(a));
  r = v128_xor(r, f64x2_convert_low_i32x4_u(a));
  r = v128_xor(r, v128_load8x8_s(a.lo));
  r = v128_xor(r, i8x16_replace_lane(a, 3, words[1]));
  words[2] = i8x16_bitmask(r) + i32x4_all_true(r) + v128_any_true(r) + i8x16_extract_lane_s(r, 5);
  io[3] = r;
}

}  // namespace ww::sem
