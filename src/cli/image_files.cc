#include "cli/image_files.h"

#include <png.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace ww::cli {
namespace {

Error file_error(const std::string& what, const std::string& path, const std::string& why) {
  return make_error(kNoOffset, what + " " + path + ": " + why);
}

// The simplified API (libpng >= 1.6) reports errors through image.message
// instead of longjmp, so no setjmp is needed here.
struct PngImage {
  png_image img;
  PngImage() {
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
  }
  ~PngImage() { png_image_free(&img); }
};

Result<std::vector<uint8_t>> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return file_error("cannot open", path, std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return file_error("cannot read", path, "read error");
  return bytes;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<Image> read_png(const std::string& path) {
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_all(path));
  PngImage p;
  if (!png_image_begin_read_from_memory(&p.img, bytes.data(), bytes.size()))
    return file_error("cannot read PNG", path, p.img.message);
  if (p.img.width == 0 || p.img.height == 0 || uint64_t(p.img.width) * p.img.height > kMaxImagePixels)
    return file_error("cannot read PNG", path,
                      "image too large (" + std::to_string(p.img.width) + "x" + std::to_string(p.img.height) + ")");
  p.img.format = PNG_FORMAT_RGBA;
  Image out;
  out.width = p.img.width;
  out.height = p.img.height;
  out.rgba.resize(size_t(out.width) * out.height * 4);
  if (!png_image_finish_read(&p.img, nullptr, out.rgba.data(), 0, nullptr))
    return file_error("cannot read PNG", path, p.img.message);
  return out;
}

Status write_png(const std::string& path, const Image& image) {
  if (image.width == 0 || image.height == 0 || image.rgba.size() != size_t(image.width) * image.height * 4)
    return file_error("cannot write PNG", path, "image buffer does not match its size");
  PngImage p;
  p.img.width = image.width;
  p.img.height = image.height;
  p.img.format = PNG_FORMAT_RGBA;
  if (!png_image_write_to_file(&p.img, path.c_str(), 0, image.rgba.data(), 0, nullptr))
    return file_error("cannot write PNG", path, p.img.message);
  return Status::Ok();
}

// .npy v1/v2/v3: "\x93NUMPY", major, minor, header length (2 bytes for v1,
// 4 for later), then a Python dict literal, then the data.
Result<std::vector<int32_t>> read_state_file(const std::string& path) {
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_all(path));
  size_t data_at = 0;
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), kMagic, 6) == 0) {
    if (bytes.size() < 10) return file_error("cannot read state", path, "truncated .npy header");
    uint8_t major = bytes[6];
    size_t hlen, hstart;
    if (major == 1) {
      hlen = bytes[8] | size_t(bytes[9]) << 8;
      hstart = 10;
    } else if (major == 2 || major == 3) {
      if (bytes.size() < 12) return file_error("cannot read state", path, "truncated .npy header");
      hlen = bytes[8] | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
      hstart = 12;
    } else {
      return file_error("cannot read state", path, "unsupported .npy version " + std::to_string(major));
    }
    if (hlen > bytes.size() - hstart) return file_error("cannot read state", path, "truncated .npy header");
    std::string header(bytes.begin() + hstart, bytes.begin() + hstart + hlen);
    auto strip = [](std::string s) {
      std::string r;
      for (char c : s)
        if (c != ' ') r += c;
      return r;
    };
    std::string h = strip(header);
    bool int32_le = h.find("'descr':'<i4'") != std::string::npos || h.find("\"descr\":\"<i4\"") != std::string::npos;
    if (!int32_le)
      return file_error("cannot read state", path, ".npy dtype must be little-endian int32 ('<i4'), header: " + header);
    if (h.find("'fortran_order':True") != std::string::npos)
      return file_error("cannot read state", path, ".npy in Fortran order is not supported");
    data_at = hstart + hlen;
  }
  size_t n = bytes.size() - data_at;
  if (n % 4 != 0)
    return file_error("cannot read state", path,
                      "size " + std::to_string(n) + " bytes is not a multiple of 4 (int32 values)");
  std::vector<int32_t> values(n / 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t* b = bytes.data() + data_at + i * 4;
    values[i] = int32_t(uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24);
  }
  return values;
}

Status write_state_file(const std::string& path, const std::vector<int32_t>& values) {
  std::string out;
  if (ends_with(path, ".npy")) {
    std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (" + std::to_string(values.size()) + ",), }";
    // The magic, version and length take 10 bytes; pad the header with
    // spaces and a newline so the data starts 64-byte aligned, as NumPy does.
    size_t total = 10 + dict.size() + 1;
    size_t padded = (total + 63) / 64 * 64;
    dict.append(padded - total, ' ');
    dict += '\n';
    out.append("\x93NUMPY\x01\x00", 8);
    out += char(dict.size() & 0xff);
    out += char(dict.size() >> 8);
    out += dict;
  }
  for (int32_t v : values) {
    uint32_t u = uint32_t(v);
    for (int k = 0; k < 4; ++k) out += char((u >> (8 * k)) & 0xff);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return file_error("cannot write state", path, std::strerror(errno));
  f.write(out.data(), std::streamsize(out.size()));
  f.close();
  if (!f) return file_error("cannot write state", path, "write error");
  return Status::Ok();
}

Result<std::pair<uint32_t, uint32_t>> parse_image_size(const std::string& text) {
  auto bad = [&](const std::string& why) { return make_error(kNoOffset, "invalid image size '" + text + "': " + why); };
  size_t x = text.find('x');
  if (x == std::string::npos) return bad("expected WIDTHxHEIGHT");
  auto num = [](const std::string& s, uint32_t& v) {
    if (s.empty() || s.size() > 5) return false;
    uint32_t r = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      r = r * 10 + uint32_t(c - '0');
    }
    v = r;
    return true;
  };
  uint32_t w, h;
  if (!num(text.substr(0, x), w) || !num(text.substr(x + 1), h)) return bad("expected WIDTHxHEIGHT");
  if (w == 0 || h == 0 || w > 65535 || h > 65535) return bad("width and height must be 1..65535");
  if (uint64_t(w) * h > kMaxImagePixels) return bad("more than 2^26 pixels");
  return std::make_pair(w, h);
}

}  // namespace ww::cli
