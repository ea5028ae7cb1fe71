// The arithmetic of the `gpu` import module's intrinsics (pixel conversion,
// texel addressing, bilinear filtering), shared by the CPU host functions
// (src/intrinsics/) and the GPU kernel so that both produce the same bits.
//
// Must compile with g++ and nvcc: no host-only std:: calls, no libm calls.
// Every float operation goes through ww_fmul/ww_fadd/ww_fsub/ww_fdiv, which
// on the device are the explicitly rounded intrinsics: nvcc contracts a*b+c
// into an FMA by default (--fmad=true), and one FMA would change the last
// bit of a channel. The host build uses -ffp-contract=off for the same
// reason.
#pragma once

#include <stdint.h>

#include "semantics/hd.h"

namespace ww::gpu {

// One identifier per intrinsic, for backends that dispatch on a number
// (the kernel). The names and wasm types live in src/intrinsics/gpu_batch.h.
enum class Intrinsic : uint8_t {
  GetThreadId,
  InstanceCount,
  GetTime,
  SetPixel,
  ReadState,
  WriteState,
  AtomicAdd,
  TextureSample,
  // Files beneath the preopened directories (common/guest_files.h): the
  // host serves these, on the GPU too (the instance leaves its kernel).
  ReadFile,
  WriteFile,
  Count_,
};

// Whether the host, not the device, serves intrinsic `id`.
WW_HD constexpr bool intrinsic_on_host(Intrinsic id) { return id == Intrinsic::ReadFile || id == Intrinsic::WriteFile; }

enum class TextureFilter : uint8_t { Nearest = 0, Bilinear = 1 };

// Units a texture can be bound to: 0 .. kMaxTextureUnits-1.
inline constexpr int32_t kMaxTextureUnits = 16;

WW_HD inline float ww_fmul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
WW_HD inline float ww_fadd(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
WW_HD inline float ww_fsub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
WW_HD inline float ww_fdiv(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// ------------------------------------------------------------------ pixels

// (uint8)(clamp(v, 0, 1) * 255 + 0.5), NaN -> 0. The comparisons are
// written so that NaN fails the first one. For v just below 1 the sum stays
// below 255.5, so the result never exceeds 255.
WW_HD inline uint8_t channel_to_byte(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 1.0f) return 255;
  return uint8_t(ww_fadd(ww_fmul(v, 255.0f), 0.5f));
}

// A pixel as one little-endian word (bytes r, g, b, a in memory order), so
// a backend stores it with one aligned 32-bit write and two instances that
// write the same pixel never leave a mix of both colours.
WW_HD inline uint32_t pack_rgba8(float r, float g, float b, float a) {
  return uint32_t(channel_to_byte(r)) | uint32_t(channel_to_byte(g)) << 8 | uint32_t(channel_to_byte(b)) << 16 |
         uint32_t(channel_to_byte(a)) << 24;
}

// Index of pixel (x, y) in a row-major w*h image, or -1 when it lies
// outside (negative coordinates included: they compare as large unsigned).
WW_HD inline int64_t pixel_index(int32_t x, int32_t y, uint32_t w, uint32_t h) {
  if (uint32_t(x) >= w || uint32_t(y) >= h) return -1;
  return int64_t(uint32_t(y)) * int64_t(w) + int64_t(uint32_t(x));
}

// ------------------------------------------------------------------- state

WW_HD inline bool state_index_ok(int32_t idx, uint32_t size) { return uint32_t(idx) < size; }

// ---------------------------------------------------------------- textures

// A texture as the kernel and the host see it: tightly packed RGBA8 rows.
struct TextureView {
  const uint8_t* rgba = nullptr;
  uint32_t width = 0, height = 0;
};

WW_HD inline float byte_to_channel(uint8_t b) { return ww_fdiv(float(b), 255.0f); }

// Nearest: clamp(floor(u * size), 0, size-1); NaN -> 0. Clamping happens in
// float before the conversion so that huge or infinite coordinates never
// overflow the int conversion; for t in [0, size) truncation is floor.
WW_HD inline uint32_t texel_nearest(float u, uint32_t size) {
  float t = ww_fmul(u, float(size));
  if (!(t >= 0.0f)) return 0;
  if (t >= float(size)) return size - 1;
  uint32_t i = uint32_t(t);
  // float(size) can round up for sizes above 2^24; keep the index in range.
  return i < size ? i : size - 1;
}

// Bilinear addressing along one axis: t = u*size - 0.5 (two roundings, no
// FMA), i0 = floor(t), frac = t - i0, taps i0 and i0+1 each clamped to
// [0, size-1]. NaN u is treated as u = 0. t is first clamped to [-1, size]:
// beyond that both taps clamp to the same edge texel anyway, and the
// clamp keeps the int conversion defined.
struct BilinearTaps {
  uint32_t i0, i1;
  float frac;
};
WW_HD inline BilinearTaps texel_bilinear(float u, uint32_t size) {
  if (u != u) u = 0.0f;
  float t = ww_fsub(ww_fmul(u, float(size)), 0.5f);
  if (t < -1.0f) t = -1.0f;
  if (t > float(size)) t = float(size);
  int64_t i = int64_t(t);    // truncation toward zero
  if (float(i) > t) i -= 1;  // floor for negative non-integers
  // Exact: the fractional part of a float below 2^24 is representable.
  float frac = ww_fsub(t, float(i));
  int64_t last = int64_t(size) - 1;
  int64_t a = i < 0 ? 0 : (i > last ? last : i);
  int64_t b = i + 1 < 0 ? 0 : (i + 1 > last ? last : i + 1);
  return {uint32_t(a), uint32_t(b), frac};
}

// a + t*(b-a): returns a exactly when a == b, so a clamped edge stays the
// edge texel's own value.
WW_HD inline float lerp_channel(float a, float b, float t) { return ww_fadd(a, ww_fmul(t, ww_fsub(b, a))); }

// Samples `tex` at (u, v); writes r, g, b, a in 0..1. An empty texture
// samples as zeros (a bound texture is never empty: PNGs are at least 1x1).
WW_HD inline void texture_sample(const TextureView& tex, TextureFilter filter, float u, float v, float out[4]) {
  if (tex.width == 0 || tex.height == 0 || tex.rgba == nullptr) {
    out[0] = out[1] = out[2] = out[3] = 0.0f;
    return;
  }
  const uint64_t row = uint64_t(tex.width) * 4;
  if (filter == TextureFilter::Nearest) {
    uint32_t x = texel_nearest(u, tex.width), y = texel_nearest(v, tex.height);
    const uint8_t* p = tex.rgba + uint64_t(y) * row + uint64_t(x) * 4;
    for (int c = 0; c < 4; ++c) out[c] = byte_to_channel(p[c]);
    return;
  }
  BilinearTaps tx = texel_bilinear(u, tex.width), ty = texel_bilinear(v, tex.height);
  const uint8_t* p00 = tex.rgba + uint64_t(ty.i0) * row + uint64_t(tx.i0) * 4;
  const uint8_t* p10 = tex.rgba + uint64_t(ty.i0) * row + uint64_t(tx.i1) * 4;
  const uint8_t* p01 = tex.rgba + uint64_t(ty.i1) * row + uint64_t(tx.i0) * 4;
  const uint8_t* p11 = tex.rgba + uint64_t(ty.i1) * row + uint64_t(tx.i1) * 4;
  for (int c = 0; c < 4; ++c) {
    float top = lerp_channel(byte_to_channel(p00[c]), byte_to_channel(p10[c]), tx.frac);
    float bottom = lerp_channel(byte_to_channel(p01[c]), byte_to_channel(p11[c]), tx.frac);
    out[c] = lerp_channel(top, bottom, ty.frac);
  }
}

}  // namespace ww::gpu
