// Helpers for decoder tests: modules are written as hex bytes, section by
// section, with the WAT they encode in a comment beside them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "decode/decoder.h"

namespace ww::test {

using Bytes = std::vector<uint8_t>;

// "\0asm" version 1 followed by the given pieces.
inline Bytes wasm(std::initializer_list<Bytes> parts) {
  Bytes b = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  for (const Bytes& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}

// A section with a one-byte size computed from its contents.
inline Bytes section(uint8_t id, Bytes contents) {
  Bytes b = {id, static_cast<uint8_t>(contents.size())};
  EXPECT_LT(contents.size(), 128u) << "test helper only writes one-byte sizes";
  b.insert(b.end(), contents.begin(), contents.end());
  return b;
}

inline Bytes str(const std::string& s) {
  // Sized first: inserting into a one-byte vector makes GCC 12 warn of a
  // copy out of bounds that cannot happen (-Warray-bounds).
  Bytes b(s.size() + 1);
  b[0] = static_cast<uint8_t>(s.size());
  std::copy(s.begin(), s.end(), b.begin() + 1);
  return b;
}

inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}

inline Module decode_ok(const Bytes& bytes, const DecodeOptions& opts = {}) {
  auto r = decode_module(bytes, opts);
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  if (!r.ok()) return Module{};
  return std::move(*r);
}

// Asserts the exact message and byte offset of a decode failure.
#define EXPECT_DECODE_ERROR(bytes, msg, off)                               \
  do {                                                                     \
    auto r_ = ::ww::decode_module(bytes);                                  \
    ASSERT_FALSE(r_.ok()) << "decoded, expected: " << (msg);               \
    EXPECT_EQ(r_.error().message, std::string(msg));                       \
    EXPECT_EQ(r_.error().offset, uint64_t(off)) << r_.error().to_string(); \
  } while (0)

}  // namespace ww::test
