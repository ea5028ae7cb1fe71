// Bounds-checked cursor over module bytes with the LEB128 rules of the
// binary format. Every read reports failures with the offset of the byte that
// broke the rule, using the spec tests' wording ("integer representation too
// long", "integer too large", "unexpected end").
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "common/result.h"

namespace ww {

class ByteReader {
 public:
  // `base` is the offset of `data[0]` within the whole module, so errors
  // from a sub-reader (a section, a function body) still name module offsets.
  ByteReader(const uint8_t* data, size_t size, uint64_t base = 0)
      : begin_(data), p_(data), end_(data + size), base_(base) {}

  uint64_t offset() const { return base_ + uint64_t(p_ - begin_); }
  size_t remaining() const { return size_t(end_ - p_); }
  bool at_end() const { return p_ == end_; }
  const uint8_t* pos() const { return p_; }

  // A reader over the next `n` bytes; this reader skips past them.
  Result<ByteReader> sub(size_t n, const char* what_if_short = "unexpected end");

  Result<uint8_t> u8();
  Result<uint32_t> fixed_u32();  // little-endian, not LEB
  Result<uint64_t> fixed_u64();
  Result<uint32_t> u32();  // unsigned LEB128, at most 5 bytes
  Result<int32_t> s32();   // signed LEB128, at most 5 bytes
  Result<int64_t> s33();   // signed LEB128, at most 5 bytes (block types)
  Result<int64_t> s64();   // signed LEB128, at most 10 bytes
  Result<uint64_t> u64();  // unsigned LEB128, at most 10 bytes
  Result<float> f32();     // raw IEEE bits, little-endian
  Result<double> f64();
  Result<uint32_t> f32_bits();
  Result<uint64_t> f64_bits();
  // A vector of bytes with a u32 length prefix; returns a pointer into the
  // underlying buffer.
  Status bytes(size_t n, const uint8_t** out);
  // A length-prefixed UTF-8 name, checked for well-formed UTF-8.
  Result<std::string> name();

  Status skip(size_t n);

  Error error(std::string message) const { return make_error(offset(), std::move(message)); }
  Error error_at(uint64_t off, std::string message) const { return make_error(off, std::move(message)); }

 private:
  Result<uint64_t> leb_unsigned(int max_bits);
  Result<int64_t> leb_signed(int max_bits);

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  uint64_t base_;
};

bool is_valid_utf8(const uint8_t* s, size_t n);

}  // namespace ww
