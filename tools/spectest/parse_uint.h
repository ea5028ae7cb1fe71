// Strict decimal parsing for the tools' command lines: the whole string, no
// sign, no overflow.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace ww::spectest {

inline bool parse_uint(const char* s, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0) return false;
  out = v;
  return true;
}

}  // namespace ww::spectest
