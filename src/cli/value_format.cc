#include "cli/value_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace ww::cli {
namespace {

Error bad(std::string_view text, const char* type) {
  return make_error(kNoOffset, "cannot parse '" + std::string(text) + "' as " + type);
}

// Magnitude as unsigned 64-bit; rejects empty, junk and overflow.
bool parse_magnitude(std::string_view s, uint64_t& out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

bool split_sign(std::string_view& s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  return neg;
}

// Shared by f32 and f64: MantBits is the width of the significand field.
template <class F, class Bits, int MantBits>
Result<Bits> parse_float_bits(std::string_view text, const char* tname) {
  constexpr Bits kSign = Bits(1) << (sizeof(Bits) * 8 - 1);
  constexpr Bits kMant = (Bits(1) << MantBits) - 1;
  constexpr Bits kExp = ~kSign & ~kMant;
  constexpr Bits kQuiet = Bits(1) << (MantBits - 1);
  std::string_view s = text;
  bool neg = split_sign(s);
  Bits sign = neg ? kSign : 0;
  if (s == "inf" || s == "infinity") return Bits(sign | kExp);
  if (s == "nan") return Bits(sign | kExp | kQuiet);
  if (s.substr(0, 4) == "nan:") {
    std::string_view p = s.substr(4);
    uint64_t payload = 0;
    if (p.size() < 3 || (p.substr(0, 2) != "0x" && p.substr(0, 2) != "0X") || !parse_magnitude(p, payload) ||
        payload == 0 || payload > kMant)
      return make_error(kNoOffset,
                        "bad NaN payload in '" + std::string(text) + "' for " + tname +
                            (sizeof(Bits) == 4 ? " (need 0x1 .. 0x7fffff)" : " (need 0x1 .. 0xfffffffffffff)"));
    return Bits(sign | kExp | Bits(payload));
  }
  if (s.empty()) return bad(text, tname);
  // glibc's strtof/strtod round correctly (subnormals, overflow to inf) and
  // read hex floats; the character check keeps out what they would also
  // accept but a wasm literal must not (spaces, "nan(...)", a second sign).
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  bool digit = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool is_digit = (c >= '0' && c <= '9') || (hex && i >= 2 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    if (hex && i >= 2 && (c == 'p' || c == 'P')) hex = false;  // exponent is decimal
    digit |= is_digit;
    bool ok = is_digit || c == '.' || (i == 1 && (c == 'x' || c == 'X')) || c == 'e' || c == 'E' || c == 'p' ||
              c == 'P' || ((c == '+' || c == '-') && i > 0 && std::strchr("eEpP", s[i - 1]));
    if (!ok) return bad(text, tname);
  }
  if (!digit) return bad(text, tname);
  std::string z(s);
  char* end = nullptr;
  F v;
  if constexpr (sizeof(F) == 4) v = std::strtof(z.c_str(), &end);
  else v = std::strtod(z.c_str(), &end);
  if (end != z.c_str() + z.size()) return bad(text, tname);
  Bits b;
  std::memcpy(&b, &v, sizeof b);
  return Bits(b | sign);
}

template <class F, class Bits, int MantBits>
std::string format_float_bits(Bits b) {
  constexpr Bits kSign = Bits(1) << (sizeof(Bits) * 8 - 1);
  constexpr Bits kMant = (Bits(1) << MantBits) - 1;
  constexpr Bits kExp = ~kSign & ~kMant;
  constexpr Bits kQuiet = Bits(1) << (MantBits - 1);
  std::string out = (b & kSign) ? "-" : "";
  if ((b & kExp) == kExp) {
    Bits m = b & kMant;
    if (m == 0) return out + "inf";
    if (m == kQuiet) return out + "nan";
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, uint64_t(m), 16);
    return out + "nan:0x" + std::string(buf, r.ptr);
  }
  F v;
  std::memcpy(&v, &b, sizeof v);
  char buf[64];
  // Shortest representation that parses back to the same value.
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// An integer lane of `bits` bits, signed or unsigned reading.
bool parse_int_lane(std::string_view word, uint32_t bits, uint64_t& out) {
  const bool neg = split_sign(word);
  uint64_t mag = 0;
  if (!parse_magnitude(word, mag)) return false;
  const uint64_t max_pos = bits == 64 ? ~0ull : (1ull << bits) - 1, max_neg = 1ull << (bits - 1);
  if (neg ? mag > max_neg : mag > max_pos) return false;
  out = (neg ? 0 - mag : mag) & max_pos;
  return true;
}

// "0x" and 1-32 hex digits (the vector as a 128-bit number, lane 0 in the
// low bits), or the text format's lanes: "i32x4 1 2 3 4", "f32x4 nan 1 -0 inf".
Result<Value> parse_v128(std::string_view text) {
  Value v{ValType::V128, 0, 0};
  std::string_view s = text;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    if (s.size() > 32) return bad(text, "v128 (at most 32 hex digits)");
    const size_t lo_digits = std::min<size_t>(16, s.size());
    const std::string_view hi_part = s.substr(0, s.size() - lo_digits), lo_part = s.substr(s.size() - lo_digits);
    auto hex = [](std::string_view d, uint64_t& out) {
      if (d.empty()) return true;
      auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), out, 16);
      return ec == std::errc() && p == d.data() + d.size();
    };
    if (!hex(lo_part, v.bits) || !hex(hi_part, v.hi)) return bad(text, "v128");
    return v;
  }
  std::vector<std::string_view> words;
  for (size_t at = 0; at < s.size();) {
    const size_t end = std::min(s.find(' ', at), s.size());
    if (end > at) words.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  static constexpr struct {
    const char* name;
    uint32_t bits;
    ValType lane;
  } kShapes[] = {{"i8x16", 8, ValType::I32},  {"i16x8", 16, ValType::I32}, {"i32x4", 32, ValType::I32},
                 {"i64x2", 64, ValType::I64}, {"f32x4", 32, ValType::F32}, {"f64x2", 64, ValType::F64}};
  for (const auto& shape : kShapes) {
    if (words.empty() || words[0] != shape.name) continue;
    const size_t lanes = 128 / shape.bits;
    if (words.size() != lanes + 1)
      return make_error(kNoOffset,
                        "'" + std::string(text) + "': " + shape.name + " takes " + std::to_string(lanes) + " lanes");
    for (size_t k = 0; k < lanes; ++k) {
      uint64_t lane = 0;
      if (shape.lane == ValType::F32 || shape.lane == ValType::F64) {
        WW_ASSIGN_OR_RETURN(Value f, parse_value(words[k + 1], shape.lane));
        lane = f.bits;
      } else if (!parse_int_lane(words[k + 1], shape.bits, lane)) {
        return make_error(kNoOffset, "lane '" + std::string(words[k + 1]) + "' of '" + std::string(text) + "' is no " +
                                         std::to_string(shape.bits) + "-bit integer");
      }
      const size_t bit = k * shape.bits;
      (bit < 64 ? v.bits : v.hi) |= lane << (bit % 64);
    }
    return v;
  }
  return bad(text, "v128 (give 0x and up to 32 hex digits, or a shape and its lanes: \"i32x4 1 2 3 4\")");
}

}  // namespace

Result<uint32_t> parse_f32_bits(std::string_view text) { return parse_float_bits<float, uint32_t, 23>(text, "f32"); }
Result<uint64_t> parse_f64_bits(std::string_view text) { return parse_float_bits<double, uint64_t, 52>(text, "f64"); }
std::string format_f32(uint32_t bits) { return format_float_bits<float, uint32_t, 23>(bits); }
std::string format_f64(uint64_t bits) { return format_float_bits<double, uint64_t, 52>(bits); }

Result<uint64_t> parse_u64(std::string_view text) {
  uint64_t v = 0;
  if (!parse_magnitude(text, v)) return bad(text, "a non-negative integer");
  return v;
}

Result<Value> parse_value(std::string_view text, ValType type) {
  switch (type) {
    case ValType::I32:
    case ValType::I64: {
      std::string_view s = text;
      bool neg = split_sign(s);
      uint64_t mag = 0;
      const char* tname = valtype_name(type);
      if (!parse_magnitude(s, mag)) return bad(text, tname);
      // Both signed and unsigned readings are accepted: wasm integers have no sign.
      uint64_t max_pos = type == ValType::I32 ? 0xFFFFFFFFull : ~0ull;
      uint64_t max_neg = type == ValType::I32 ? 0x80000000ull : 0x8000000000000000ull;
      if ((neg && mag > max_neg) || (!neg && mag > max_pos))
        return make_error(kNoOffset, "'" + std::string(text) + "' is out of range for " + tname);
      uint64_t bits = neg ? (0 - mag) : mag;
      if (type == ValType::I32) bits &= 0xFFFFFFFFull;
      return Value{type, bits};
    }
    case ValType::F32: {
      WW_ASSIGN_OR_RETURN(uint32_t b, parse_f32_bits(text));
      return Value::f32_bits(b);
    }
    case ValType::F64: {
      WW_ASSIGN_OR_RETURN(uint64_t b, parse_f64_bits(text));
      return Value::f64_bits(b);
    }
    case ValType::FuncRef:
      if (text == "null") return Value::null(type);
      return make_error(kNoOffset, "cannot parse '" + std::string(text) + "' as funcref (only null can be passed)");
    case ValType::ExternRef: {
      if (text == "null") return Value::null(type);
      std::string_view s = text;
      if (s.starts_with("ref.extern ")) s.remove_prefix(11);
      uint64_t n = 0;
      if (!parse_magnitude(s, n) || n == ~0ull) return bad(text, "externref");
      return Value{type, n + 1};
    }
    case ValType::V128: return parse_v128(text);
  }
  return make_error(kNoOffset,
                    std::string("values of type ") + valtype_name(type) + " cannot be given on the command line");
}

std::string format_value(const Value& v) {
  switch (v.type) {
    case ValType::I32: return std::to_string(int32_t(uint32_t(v.bits)));
    case ValType::I64: return std::to_string(int64_t(v.bits));
    case ValType::F32: return format_f32(uint32_t(v.bits));
    case ValType::F64: return format_f64(v.bits);
    case ValType::FuncRef: return v.bits == 0 ? "null" : "ref.func";
    case ValType::ExternRef: return v.bits == 0 ? "null" : "ref.extern " + std::to_string(v.bits - 1);
    case ValType::V128: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "0x%016llx%016llx", (unsigned long long)v.hi, (unsigned long long)v.bits);
      return buf;
    }
  }
  return "?";
}

}  // namespace ww::cli
