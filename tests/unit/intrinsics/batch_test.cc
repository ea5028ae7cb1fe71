// GpuBatch: the shared state of one batch (image, state buffer, textures).
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <thread>

#include "intrinsics/gpu_batch.h"

namespace ww::intrinsics {
using namespace ::ww::gpu;  // the arithmetic the intrinsics share
namespace {

TEST(State, ReadWriteAtomicAdd) {
  GpuBatch b;
  b.state = {5, 0, INT32_MAX};
  int32_t v = 0;
  EXPECT_EQ(gpu_read_state(b, 0, &v), TrapCode::None);
  EXPECT_EQ(v, 5);
  EXPECT_EQ(gpu_write_state(b, 1, -7), TrapCode::None);
  EXPECT_EQ(gpu_read_state(b, 1, &v), TrapCode::None);
  EXPECT_EQ(v, -7);
  EXPECT_EQ(gpu_atomic_add(b, 1, 10, &v), TrapCode::None);
  EXPECT_EQ(v, -7);  // the old value
  EXPECT_EQ(b.state[1], 3);
  // Wraps like i32.add.
  EXPECT_EQ(gpu_atomic_add(b, 2, 1, &v), TrapCode::None);
  EXPECT_EQ(v, INT32_MAX);
  EXPECT_EQ(b.state[2], INT32_MIN);
}

TEST(State, OutOfRangeTraps) {
  GpuBatch b;
  b.state = {1, 2};
  int32_t v = 99;
  EXPECT_EQ(gpu_read_state(b, 2, &v), TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(gpu_read_state(b, -1, &v), TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(v, 99);
  EXPECT_EQ(gpu_write_state(b, 2, 0), TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(gpu_write_state(b, INT32_MIN, 0), TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(gpu_atomic_add(b, 7, 1, &v), TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(b.state, (std::vector<int32_t>{1, 2}));
  GpuBatch empty;
  EXPECT_EQ(gpu_read_state(empty, 0, &v), TrapCode::StateIndexOutOfRange);
  EXPECT_STREQ(trap_message(TrapCode::StateIndexOutOfRange), "state index out of range");
}

TEST(State, AtomicAddUnderManyThreads) {
  GpuBatch b;
  b.state = {0, 0};
  constexpr int kThreads = 8, kIters = 50000;
  // Each thread also collects the old values it saw: across all threads the
  // old values of slot 1 must be exactly 0..N-1, each once, if every add
  // was atomic.
  std::vector<std::vector<int32_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        int32_t old;
        ASSERT_EQ(gpu_atomic_add(b, 0, t + 1, &old), TrapCode::None);
        ASSERT_EQ(gpu_atomic_add(b, 1, 1, &old), TrapCode::None);
        seen[size_t(t)].push_back(old);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(b.state[0], kIters * (kThreads * (kThreads + 1) / 2));
  EXPECT_EQ(b.state[1], kIters * kThreads);
  std::vector<char> hit(size_t(kIters) * kThreads, 0);
  for (auto& s : seen)
    for (int32_t old : s) {
      ASSERT_GE(old, 0);
      ASSERT_LT(old, kIters * kThreads);
      ASSERT_EQ(hit[size_t(old)], 0) << "old value " << old << " returned twice";
      hit[size_t(old)] = 1;
    }
}

TEST(Pixels, WritesConvertedColourAndCountsIgnored) {
  GpuBatch b;
  b.set_image_size(4, 2);
  EXPECT_EQ(gpu_set_pixel(b, 1, 1, 1.0f, 0.5f, -3.0f, std::numeric_limits<float>::quiet_NaN()), TrapCode::None);
  EXPECT_EQ(gpu_set_pixel(b, 4, 0, 1, 1, 1, 1), TrapCode::None);
  EXPECT_EQ(gpu_set_pixel(b, -1, 0, 1, 1, 1, 1), TrapCode::None);
  EXPECT_EQ(gpu_set_pixel(b, 0, 2, 1, 1, 1, 1), TrapCode::None);
  EXPECT_EQ(b.ignored_pixels.load(), 3u);
  Image img = b.image->to_image();
  ASSERT_EQ(img.rgba.size(), 32u);
  size_t at = (1 * 4 + 1) * 4;
  EXPECT_EQ(img.rgba[at + 0], 255);
  EXPECT_EQ(img.rgba[at + 1], 128);
  EXPECT_EQ(img.rgba[at + 2], 0);
  EXPECT_EQ(img.rgba[at + 3], 0);
  for (size_t i = 0; i < img.rgba.size(); ++i)
    if (i < at || i >= at + 4) {
      EXPECT_EQ(img.rgba[i], 0) << i;
    }
}

TEST(Pixels, NoImageCountsEveryPixel) {
  GpuBatch b;
  EXPECT_EQ(gpu_set_pixel(b, 0, 0, 1, 1, 1, 1), TrapCode::None);
  EXPECT_EQ(b.ignored_pixels.load(), 1u);
}

TEST(Pixels, ConcurrentGradient) {
  GpuBatch b;
  b.set_image_size(800, 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int x = t; x < 800; x += 4) (void)gpu_set_pixel(b, x, 0, float(x) / 800.0f, 0, 0, 1);
    });
  for (auto& th : threads) th.join();
  Image img = b.image->to_image();
  for (int x = 0; x < 800; ++x) {
    EXPECT_EQ(img.rgba[size_t(x) * 4], uint8_t(float(x) / 800.0f * 255.0f + 0.5f)) << x;
    EXPECT_EQ(img.rgba[size_t(x) * 4 + 3], 255);
  }
  EXPECT_EQ(b.ignored_pixels.load(), 0u);
}

TEST(Textures, UnboundUnitTrapsAndBindingIsChecked) {
  GpuBatch b;
  float c[4];
  EXPECT_EQ(gpu_texture_sample(b, 0, 0.5f, 0.5f, c), TrapCode::TextureUnitUnbound);
  EXPECT_EQ(gpu_texture_sample(b, -1, 0.5f, 0.5f, c), TrapCode::TextureUnitUnbound);
  EXPECT_EQ(gpu_texture_sample(b, 1000, 0.5f, 0.5f, c), TrapCode::TextureUnitUnbound);
  EXPECT_STREQ(trap_message(TrapCode::TextureUnitUnbound), "texture unit not bound");

  Image img{1, 1, {10, 20, 30, 40}};
  Status s = b.bind_texture(16, img);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "texture unit 16 out of range (0..15)");
  EXPECT_FALSE(b.bind_texture(0, Image{2, 2, {1, 2, 3}}).ok());
  ASSERT_TRUE(b.bind_texture(3, img).ok());
  EXPECT_EQ(gpu_texture_sample(b, 3, 0.5f, 0.5f, c), TrapCode::None);
  EXPECT_EQ(c[0], 10.0f / 255.0f);
  EXPECT_EQ(c[3], 40.0f / 255.0f);
  EXPECT_EQ(gpu_texture_sample(b, 2, 0.5f, 0.5f, c), TrapCode::TextureUnitUnbound);
}

TEST(Textures, FilterModeIsHonoured) {
  GpuBatch b;
  ASSERT_TRUE(b.bind_texture(0, Image{2, 1, {0, 0, 0, 0, 255, 255, 255, 255}}).ok());
  float c[4];
  ASSERT_EQ(gpu_texture_sample(b, 0, 0.5f, 0.5f, c), TrapCode::None);
  EXPECT_EQ(c[0], 1.0f);  // nearest: floor(0.5*2) = texel 1
  b.filter = TextureFilter::Bilinear;
  ASSERT_EQ(gpu_texture_sample(b, 0, 0.5f, 0.5f, c), TrapCode::None);
  EXPECT_EQ(c[0], 0.5f);
}

TEST(Intrinsics, TableHasTheFixedSignatures) {
  EXPECT_EQ(intrinsics().size(), size_t(Intrinsic::Count_));
  const IntrinsicInfo* ts = find_intrinsic("texture_sample");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(functype_to_string(ts->type),
            functype_to_string(FuncType{{ValType::I32, ValType::F32, ValType::F32},
                                        {ValType::F32, ValType::F32, ValType::F32, ValType::F32}}));
  ASSERT_NE(find_intrinsic("set_pixel"), nullptr);
  EXPECT_EQ(find_intrinsic("set_pixel")->type.params.size(), 6u);
  EXPECT_EQ(find_intrinsic("atomic_add")->type.results, std::vector<ValType>{ValType::I32});
  EXPECT_EQ(find_intrinsic("get_time")->type.results, std::vector<ValType>{ValType::F32});
  EXPECT_EQ(find_intrinsic("nope"), nullptr);
}

}  // namespace
}  // namespace ww::intrinsics
