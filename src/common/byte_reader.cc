#include "common/byte_reader.h"

namespace ww {

std::string Error::to_string() const {
  if (offset == kNoOffset) return message;
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(offset));
  return message + " (at byte " + buf + ")";
}

Result<ByteReader> ByteReader::sub(size_t n, const char* what_if_short) {
  if (n > remaining()) return error(what_if_short);
  ByteReader r(p_, n, offset());
  p_ += n;
  return r;
}

Result<uint8_t> ByteReader::u8() {
  if (p_ == end_) return error("unexpected end");
  return *p_++;
}

Result<uint32_t> ByteReader::fixed_u32() {
  if (remaining() < 4) return error("unexpected end");
  uint32_t v;
  std::memcpy(&v, p_, 4);
  p_ += 4;
  return v;
}

Result<uint64_t> ByteReader::fixed_u64() {
  if (remaining() < 8) return error("unexpected end");
  uint64_t v;
  std::memcpy(&v, p_, 8);
  p_ += 8;
  return v;
}

// The last byte of a maximal-length encoding may only carry the bits that fit
// the type: extra payload bits mean "integer too large", a continuation bit
// there means "integer representation too long".
Result<uint64_t> ByteReader::leb_unsigned(int max_bits) {
  const int max_bytes = (max_bits + 6) / 7;
  uint64_t result = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (p_ == end_) return error("unexpected end");
    uint64_t off = offset();
    uint8_t b = *p_++;
    int shift = 7 * i;
    if (i == max_bytes - 1) {
      if (b & 0x80) return error_at(off, "integer representation too long");
      int used = max_bits - shift;  // bits of payload this byte may carry
      if (used < 7 && (b >> used) != 0) return error_at(off, "integer too large");
    }
    result |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return result;
  }
  return error("integer representation too long");
}

Result<int64_t> ByteReader::leb_signed(int max_bits) {
  const int max_bytes = (max_bits + 6) / 7;
  uint64_t result = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (p_ == end_) return error("unexpected end");
    uint64_t off = offset();
    uint8_t b = *p_++;
    int shift = 7 * i;
    if (i == max_bytes - 1) {
      if (b & 0x80) return error_at(off, "integer representation too long");
      // The unused high bits must all equal the sign bit of the value.
      int used = max_bits - shift;
      if (used < 7) {
        int sign_and_unused = b >> (used - 1);  // sign bit plus unused bits
        int all = (1 << (7 - used + 1)) - 1;
        if (sign_and_unused != 0 && sign_and_unused != all) return error_at(off, "integer too large");
      }
    }
    result |= uint64_t(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80)) {
      if (shift < 64 && (b & 0x40)) result |= ~uint64_t{0} << shift;
      return static_cast<int64_t>(result);
    }
  }
  return error("integer representation too long");
}

Result<uint32_t> ByteReader::u32() {
  auto r = leb_unsigned(32);
  if (!r) return r.error();
  return static_cast<uint32_t>(*r);
}
Result<uint64_t> ByteReader::u64() { return leb_unsigned(64); }
Result<int32_t> ByteReader::s32() {
  auto r = leb_signed(32);
  if (!r) return r.error();
  return static_cast<int32_t>(*r);
}
Result<int64_t> ByteReader::s33() { return leb_signed(33); }
Result<int64_t> ByteReader::s64() { return leb_signed(64); }

Result<uint32_t> ByteReader::f32_bits() { return fixed_u32(); }
Result<uint64_t> ByteReader::f64_bits() { return fixed_u64(); }
Result<float> ByteReader::f32() {
  WW_ASSIGN_OR_RETURN(uint32_t bits, fixed_u32());
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
Result<double> ByteReader::f64() {
  WW_ASSIGN_OR_RETURN(uint64_t bits, fixed_u64());
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

Status ByteReader::bytes(size_t n, const uint8_t** out) {
  if (n > remaining()) return error("unexpected end");
  *out = p_;
  p_ += n;
  return Status::Ok();
}

Status ByteReader::skip(size_t n) {
  const uint8_t* ignored;
  return bytes(n, &ignored);
}

Result<std::string> ByteReader::name() {
  WW_ASSIGN_OR_RETURN(uint32_t len, u32());
  uint64_t off = offset();
  if (len > remaining()) return error("length out of bounds");
  const uint8_t* data = p_;
  p_ += len;
  if (!is_valid_utf8(data, len)) return error_at(off, "malformed UTF-8 encoding");
  return std::string(reinterpret_cast<const char*>(data), len);
}

bool is_valid_utf8(const uint8_t* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are malformed.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;
    if (cp > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

}  // namespace ww
