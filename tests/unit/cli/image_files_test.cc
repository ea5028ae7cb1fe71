// The `gpu` intrinsics' files as the command line reads and writes them:
// PNG images (--image, --texture) and state buffers (--state-in/-out).
#include <gtest/gtest.h>

#include <png.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/image_files.h"

namespace ww::cli {
namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("ww_image_files_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
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
  write_bytes(f8, std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header + std::string(8, '\0'));
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
  for (const char* bad : {"", "800", "x600", "800x", "0x5", "5x0", "-1x5", "800X600", "65536x1", "1x1x1", "8000x9000"})
    EXPECT_FALSE(parse_image_size(bad).ok()) << bad;
}

}  // namespace
}  // namespace ww::cli
