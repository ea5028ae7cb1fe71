// GpuBatch: the shared state of one batch (image, state buffer, textures)
// and the files it reads and writes.
#include <gtest/gtest.h>

#include <png.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <thread>

#include "intrinsics/gpu_batch.h"
#include "intrinsics/image_io.h"

namespace ww::gpu {
namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("ww_intrinsics_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

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
  EXPECT_EQ(gpu_set_pixel(b, 1, 1, 1.0f, 0.5f, -3.0f, std::numeric_limits<float>::quiet_NaN()),
            TrapCode::None);
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
  EXPECT_EQ(functype_to_string(ts->type), functype_to_string(FuncType{
      {ValType::I32, ValType::F32, ValType::F32}, {ValType::F32, ValType::F32, ValType::F32, ValType::F32}}));
  ASSERT_NE(find_intrinsic("set_pixel"), nullptr);
  EXPECT_EQ(find_intrinsic("set_pixel")->type.params.size(), 6u);
  EXPECT_EQ(find_intrinsic("atomic_add")->type.results, std::vector<ValType>{ValType::I32});
  EXPECT_EQ(find_intrinsic("get_time")->type.results, std::vector<ValType>{ValType::F32});
  EXPECT_EQ(find_intrinsic("nope"), nullptr);
}

TEST(Png, RoundTripRgba) {
  Image img;
  img.width = 37;
  img.height = 11;
  std::mt19937 rng(42);
  for (size_t i = 0; i < size_t(img.width) * img.height * 4; ++i) img.rgba.push_back(uint8_t(rng()));
  std::string path = temp_path("round.png");
  ASSERT_TRUE(write_png(path, img).ok());
  Result<Image> back = read_png(path);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->width, 37u);
  EXPECT_EQ(back->height, 11u);
  EXPECT_EQ(back->rgba, img.rgba);
}

TEST(Png, GreyAndRgbConvertToRgba8) {
  // Written through libpng as 8-bit grey and RGB (no alpha): reading must
  // expand to RGBA with alpha 255.
  std::string grey = temp_path("grey.png"), rgb = temp_path("rgb.png");
  {
    png_image p{};
    p.version = PNG_IMAGE_VERSION;
    p.width = 3;
    p.height = 1;
    p.format = PNG_FORMAT_GRAY;
    uint8_t px[3] = {0, 128, 255};
    ASSERT_TRUE(png_image_write_to_file(&p, grey.c_str(), 0, px, 0, nullptr));
    png_image q{};
    q.version = PNG_IMAGE_VERSION;
    q.width = 1;
    q.height = 2;
    q.format = PNG_FORMAT_RGB;
    uint8_t px2[6] = {1, 2, 3, 250, 251, 252};
    ASSERT_TRUE(png_image_write_to_file(&q, rgb.c_str(), 0, px2, 0, nullptr));
  }
  Result<Image> g = read_png(grey);
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  EXPECT_EQ(g->rgba, (std::vector<uint8_t>{0, 0, 0, 255, 128, 128, 128, 255, 255, 255, 255, 255}));
  Result<Image> c = read_png(rgb);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->rgba, (std::vector<uint8_t>{1, 2, 3, 255, 250, 251, 252, 255}));
}

TEST(Png, BadFilesAreErrors) {
  Result<Image> missing = read_png(temp_path("does-not-exist.png"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos) << missing.error().message;
  std::string junk = temp_path("junk.png");
  write_bytes(junk, "this is not a png file at all");
  Result<Image> bad = read_png(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("cannot read PNG " + junk + ": ", 0), 0u) << bad.error().message;
  // A truncated real PNG.
  std::string full = temp_path("full.png"), cut = temp_path("cut.png");
  ASSERT_TRUE(write_png(full, Image{64, 64, std::vector<uint8_t>(64 * 64 * 4, 7)}).ok());
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_bytes(cut, bytes.substr(0, bytes.size() / 2));
  EXPECT_FALSE(read_png(cut).ok());
  EXPECT_FALSE(write_png(temp_path("x.png"), Image{2, 2, {1, 2, 3}}).ok());
  EXPECT_FALSE(write_png("/nonexistent-dir/x.png", Image{1, 1, {1, 2, 3, 4}}).ok());
}

TEST(StateFile, RawAndNpyRoundTrip) {
  std::vector<int32_t> values = {0, 1, -1, INT32_MAX, INT32_MIN, 123456789};
  for (const char* name : {"state.bin", "state.npy"}) {
    std::string path = temp_path(name);
    ASSERT_TRUE(write_state_file(path, values).ok());
    Result<std::vector<int32_t>> back = read_state_file(path);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, values) << name;
  }
  EXPECT_EQ(std::filesystem::file_size(temp_path("state.bin")), values.size() * 4);
  // NumPy's own layout: 64-byte aligned header, 'descr' first.
  std::ifstream in(temp_path("state.npy"), std::ios::binary);
  std::string npy((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(npy.size(), 128 + values.size() * 4);  // as numpy.save writes it
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(npy.find("{'descr': '<i4', 'fortran_order': False, 'shape': (6,), }"), std::string::npos);
}

TEST(StateFile, RawIsLittleEndian) {
  std::string path = temp_path("le.bin");
  write_bytes(path, std::string("\x01\x00\x00\x00\xff\xff\xff\xff\x00\x01\x00\x80", 12));
  Result<std::vector<int32_t>> v = read_state_file(path);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int32_t>{1, -1, int32_t(0x80000100u)}));
}

TEST(StateFile, BadFilesAreErrors) {
  std::string odd = temp_path("odd.bin");
  write_bytes(odd, "abcde");
  Result<std::vector<int32_t>> r = read_state_file(odd);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a multiple of 4"), std::string::npos);
  std::string f8 = temp_path("f8.npy");
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
  write_bytes(f8, std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header +
                      std::string(8, '\0'));
  r = read_state_file(f8);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("int32"), std::string::npos);
  std::string trunc = temp_path("trunc.npy");
  write_bytes(trunc, std::string("\x93NUMPY\x01\x00\xff\x7f", 10));
  EXPECT_FALSE(read_state_file(trunc).ok());
  EXPECT_FALSE(read_state_file(temp_path("missing.bin")).ok());
}

TEST(ImageSize, Parses) {
  auto r = parse_image_size("800x600");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, 800u);
  EXPECT_EQ(r->second, 600u);
  for (const char* bad : {"", "800", "x600", "800x", "0x5", "5x0", "-1x5", "800X600", "65536x1", "1x1x1",
                          "8000x9000"})
    EXPECT_FALSE(parse_image_size(bad).ok()) << bad;
}

}  // namespace
}  // namespace ww::gpu
