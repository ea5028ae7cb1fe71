// Batch input and output files: numpy .npy (v1/v2, little-endian), CSV and
// raw little-endian arrays, and an output file that only appears under its
// name once it is complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/values.h"
#include "common/host_column.h"
#include "common/result.h"

namespace ww::cli {

// The whole file, read on every core; "cannot open F: reason", "F is a
// directory".
Result<Column<uint8_t>> read_all(const std::string& path);

// A parsed .npy file. dtype is numpy's kind+size ("i4", "f8", "u1", ...).
struct NpyArray {
  std::string dtype;
  char kind = 'i';  // 'i', 'u' or 'f'
  uint32_t item_size = 4;
  std::vector<uint64_t> shape;  // 1 or 2 dimensions
  bool fortran_order = false;
  std::vector<uint8_t> data;  // shape product * item_size bytes

  uint64_t rows() const { return shape.empty() ? 0 : shape[0]; }
  uint64_t cols() const { return shape.size() < 2 ? 1 : shape[1]; }
};

Result<NpyArray> parse_npy(std::span<const uint8_t> bytes, const std::string& name);

// The numpy header (magic, version, dict, padding) for an array of `rows`
// rows. `descr` is a numpy descr literal: "'<i4'" or "[('a', '<i4'), ...]".
std::string npy_header(const std::string& descr, bool fortran_order, const std::vector<uint64_t>& shape);

// Splits CSV text into rows of cells. Double-quoted cells may hold commas and
// doubled quotes; blank lines are skipped; a '\r' before '\n' is dropped.
Result<std::vector<std::vector<std::string>>> parse_csv(std::string_view text, const std::string& name);
std::string csv_escape(std::string_view cell);

// Column `col` of a .npy, .csv or raw (.bin/.raw/anything else) file, as
// `rows` values of `type`; rows beyond `rows` are ignored, fewer is an error.
// Integers feed integer and float parameters (range-checked); floats feed
// only float parameters; f4 feeds f32 bit for bit, f8 feeds f64 bit for bit.
// A CSV file's first row is a header when none of its cells is a number.
// Each row as raw bits (i32 and f32 in the low half).
Result<std::vector<uint64_t>> load_column(const std::string& path, uint32_t col, ValType type, uint64_t rows);

// Writes to a temporary file beside `path` and renames it over `path` on
// commit(), so an interrupted or failed run never leaves a file that looks
// complete. open() fails early for unwritable locations.
class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  Status open(const std::string& path);
  FILE* file() { return f_; }
  Status write(const void* data, size_t n);
  Status write(std::string_view s) { return write(s.data(), s.size()); }
  Status commit();
  void discard();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
  int temp_slot_ = -1;  // cli/interrupt.h's registration of tmp_
};

// Lower-case extension without the dot ("npy"), or "".
std::string file_extension(const std::string& path);

}  // namespace ww::cli
