// Files the `gpu` intrinsics read and write: PNG images (libpng) and state
// buffers (raw little-endian i32 or NumPy .npy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {

using wasmwarp::Image;

// Images above this many pixels are refused ("image too large"), so a
// hostile PNG header cannot make us allocate gigabytes.
inline constexpr uint64_t kMaxImagePixels = uint64_t(1) << 26;

// Any PNG colour type and bit depth, converted to RGBA8 (libpng's simplified
// API: palette and grey expanded, 16-bit reduced, missing alpha = 255).
// Errors: "cannot read PNG FILE: <libpng's reason>".
Result<Image> read_png(const std::string& path);
Status write_png(const std::string& path, const Image& image);

// A state buffer file: a NumPy .npy array of little-endian int32 ('<i4',
// 1-D or any C-order shape, flattened) when the file starts with the .npy
// magic, otherwise raw little-endian int32 values (size a multiple of 4).
Result<std::vector<int32_t>> read_state_file(const std::string& path);
// Writes .npy ('<i4', 1-D) when the path ends in ".npy", raw otherwise.
Status write_state_file(const std::string& path, const std::vector<int32_t>& values);

// Parses "WIDTHxHEIGHT" (both 1 .. 65535, product within kMaxImagePixels),
// as in `--image 800x600=out.png`.
Result<std::pair<uint32_t, uint32_t>> parse_image_size(const std::string& text);

}  // namespace ww::cli
