// The device-visible arithmetic of the gpu intrinsics (semantics/intrinsics.h):
// pixel conversion, texel addressing and filtering.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "semantics/intrinsics.h"

namespace ww::gpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ChannelToByte, ClampsAndRoundsToNearest) {
  EXPECT_EQ(channel_to_byte(0.0f), 0);
  EXPECT_EQ(channel_to_byte(-0.0f), 0);
  EXPECT_EQ(channel_to_byte(1.0f), 255);
  EXPECT_EQ(channel_to_byte(-1.0f), 0);
  EXPECT_EQ(channel_to_byte(2.0f), 255);
  EXPECT_EQ(channel_to_byte(kInf), 255);
  EXPECT_EQ(channel_to_byte(-kInf), 0);
  EXPECT_EQ(channel_to_byte(kNaN), 0);
  EXPECT_EQ(channel_to_byte(-kNaN), 0);
  EXPECT_EQ(channel_to_byte(0.5f), 128);    // 127.5 + 0.5 rounds up
  EXPECT_EQ(channel_to_byte(0.998f), 254);  // 254.49
  EXPECT_EQ(channel_to_byte(0.999f), 255);  // 254.745
  EXPECT_EQ(channel_to_byte(1e-30f), 0);
  EXPECT_EQ(channel_to_byte(std::nextafter(1.0f, 0.0f)), 255);
}

TEST(ChannelToByte, ByteOver255RoundTripsAndIsMonotonic) {
  for (int k = 0; k < 256; ++k) EXPECT_EQ(channel_to_byte(float(k) / 255.0f), k) << k;
  int prev = 0;
  for (int i = -100; i <= 1100; ++i) {
    int b = channel_to_byte(float(i) / 1000.0f);
    EXPECT_GE(b, prev);
    prev = b;
  }
  for (int k = 0; k < 256; ++k) EXPECT_EQ(channel_to_byte(byte_to_channel(uint8_t(k))), k);
}

TEST(PackRgba8, ByteOrderIsRGBAInMemory) {
  uint32_t p = pack_rgba8(1.0f, 0.0f, 0.5f, kNaN);
  EXPECT_EQ(p & 0xff, 255u);
  EXPECT_EQ((p >> 8) & 0xff, 0u);
  EXPECT_EQ((p >> 16) & 0xff, 128u);
  EXPECT_EQ(p >> 24, 0u);
}

TEST(PixelIndex, InsideAndOutside) {
  EXPECT_EQ(pixel_index(0, 0, 800, 2), 0);
  EXPECT_EQ(pixel_index(799, 0, 800, 2), 799);
  EXPECT_EQ(pixel_index(3, 1, 800, 2), 803);
  EXPECT_EQ(pixel_index(800, 0, 800, 2), -1);
  EXPECT_EQ(pixel_index(0, 2, 800, 2), -1);
  EXPECT_EQ(pixel_index(-1, 0, 800, 2), -1);
  EXPECT_EQ(pixel_index(0, -1, 800, 2), -1);
  EXPECT_EQ(pixel_index(INT32_MIN, INT32_MIN, 800, 2), -1);
  EXPECT_EQ(pixel_index(0, 0, 0, 0), -1);
}

TEST(StateIndex, UnsignedRangeCheck) {
  EXPECT_TRUE(state_index_ok(0, 4));
  EXPECT_TRUE(state_index_ok(3, 4));
  EXPECT_FALSE(state_index_ok(4, 4));
  EXPECT_FALSE(state_index_ok(-1, 4));
  EXPECT_FALSE(state_index_ok(0, 0));
}

TEST(TexelNearest, FloorThenClampToEdge) {
  EXPECT_EQ(texel_nearest(0.0f, 4), 0u);
  EXPECT_EQ(texel_nearest(0.2499f, 4), 0u);
  EXPECT_EQ(texel_nearest(0.25f, 4), 1u);  // floor(1.0)
  EXPECT_EQ(texel_nearest(0.74f, 4), 2u);
  EXPECT_EQ(texel_nearest(0.999f, 4), 3u);
  EXPECT_EQ(texel_nearest(1.0f, 4), 3u);  // clamp-to-edge, not wrap
  EXPECT_EQ(texel_nearest(7.5f, 4), 3u);
  EXPECT_EQ(texel_nearest(-0.01f, 4), 0u);
  EXPECT_EQ(texel_nearest(-0.0f, 4), 0u);
  EXPECT_EQ(texel_nearest(-1e30f, 4), 0u);
  EXPECT_EQ(texel_nearest(1e30f, 4), 3u);
  EXPECT_EQ(texel_nearest(kInf, 4), 3u);
  EXPECT_EQ(texel_nearest(-kInf, 4), 0u);
  EXPECT_EQ(texel_nearest(kNaN, 4), 0u);
  EXPECT_EQ(texel_nearest(0.5f, 1), 0u);
}

TEST(TexelBilinear, CentresEdgesAndNaN) {
  // u*W - 0.5 = 1.5 -> taps 1, 2 at 0.5
  BilinearTaps t = texel_bilinear(0.5f, 4);
  EXPECT_EQ(t.i0, 1u);
  EXPECT_EQ(t.i1, 2u);
  EXPECT_EQ(t.frac, 0.5f);
  // At a texel centre the second tap has weight 0.
  t = texel_bilinear(0.125f, 4);
  EXPECT_EQ(t.i0, 0u);
  EXPECT_EQ(t.i1, 1u);
  EXPECT_EQ(t.frac, 0.0f);
  // u = 0: t = -0.5, floor -1 -> both taps clamp to texel 0.
  t = texel_bilinear(0.0f, 4);
  EXPECT_EQ(t.i0, 0u);
  EXPECT_EQ(t.i1, 0u);
  EXPECT_EQ(t.frac, 0.5f);
  // u = 1: t = 3.5 -> taps 3 and 4 -> 4 clamps to 3.
  t = texel_bilinear(1.0f, 4);
  EXPECT_EQ(t.i0, 3u);
  EXPECT_EQ(t.i1, 3u);
  for (float u : {kNaN, -kInf, -1e30f, -3.0f}) {
    t = texel_bilinear(u, 4);
    EXPECT_EQ(t.i0, 0u) << u;
    EXPECT_EQ(t.i1, 0u) << u;
  }
  for (float u : {kInf, 1e30f, 3.0f}) {
    t = texel_bilinear(u, 4);
    EXPECT_EQ(t.i0, 3u) << u;
    EXPECT_EQ(t.i1, 3u) << u;
  }
  // 0.3*4 - 0.5 = 0.7 (in float arithmetic)
  t = texel_bilinear(0.3f, 4);
  EXPECT_EQ(t.i0, 0u);
  EXPECT_EQ(t.i1, 1u);
  EXPECT_EQ(t.frac, 0.3f * 4.0f - 0.5f);
}

// 2x2 texture: red channel 0, 255 / 51, 102; green = 10*index; blue 0; alpha 255.
const uint8_t kTex2x2[16] = {0, 0, 0, 255, 255, 10, 0, 255, 51, 20, 0, 255, 102, 30, 0, 255};

TEST(TextureSample, NearestPicksTexel) {
  TextureView tex{kTex2x2, 2, 2};
  float c[4];
  texture_sample(tex, TextureFilter::Nearest, 0.75f, 0.25f, c);
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[1], 10.0f / 255.0f);
  EXPECT_EQ(c[3], 1.0f);
  texture_sample(tex, TextureFilter::Nearest, 0.1f, 0.9f, c);
  EXPECT_EQ(c[0], 51.0f / 255.0f);
  texture_sample(tex, TextureFilter::Nearest, kNaN, kNaN, c);
  EXPECT_EQ(c[0], 0.0f);
  texture_sample(tex, TextureFilter::Nearest, 5.0f, 5.0f, c);
  EXPECT_EQ(c[0], 102.0f / 255.0f);
}

TEST(TextureSample, BilinearAveragesAndClampsToEdge) {
  TextureView tex{kTex2x2, 2, 2};
  float c[4];
  // Centre of a 2x2: t = 0.5 on both axes, equal weights.
  texture_sample(tex, TextureFilter::Bilinear, 0.5f, 0.5f, c);
  float top = 0.0f + 0.5f * (1.0f - 0.0f);
  float bottom = 51.0f / 255.0f + 0.5f * (102.0f / 255.0f - 51.0f / 255.0f);
  EXPECT_EQ(c[0], top + 0.5f * (bottom - top));
  EXPECT_NEAR(c[0], (0 + 255 + 51 + 102) / 4.0 / 255.0, 1e-6);
  EXPECT_EQ(c[3], 1.0f);
  // Corners clamp to the corner texel exactly.
  texture_sample(tex, TextureFilter::Bilinear, 0.0f, 0.0f, c);
  EXPECT_EQ(c[0], 0.0f);
  texture_sample(tex, TextureFilter::Bilinear, 1.0f, 0.0f, c);
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[1], 10.0f / 255.0f);
  texture_sample(tex, TextureFilter::Bilinear, -9.0f, 9.0f, c);
  EXPECT_EQ(c[0], 51.0f / 255.0f);
  texture_sample(tex, TextureFilter::Bilinear, kNaN, 1.0f, c);
  EXPECT_EQ(c[0], 51.0f / 255.0f);
  // Along the top edge, halfway between the two texel centres.
  texture_sample(tex, TextureFilter::Bilinear, 0.5f, 0.0f, c);
  EXPECT_EQ(c[0], 0.5f);
  EXPECT_EQ(c[1], 0.0f + 0.5f * (10.0f / 255.0f));
}

TEST(TextureSample, EmptyTextureIsZero) {
  float c[4] = {1, 1, 1, 1};
  texture_sample(TextureView{}, TextureFilter::Bilinear, 0.5f, 0.5f, c);
  for (float x : c) EXPECT_EQ(x, 0.0f);
}

}  // namespace
}  // namespace ww::gpu
