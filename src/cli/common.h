// Small helpers shared by the CLI commands.
#pragma once

#include <cstdio>
#include <string>

#include "common/result.h"

namespace ww::cli {

// "message (at byte 0x1f)" or just "message".
inline std::string describe(const Error& e) {
  if (e.offset == kNoOffset) return e.message;
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(e.offset));
  return e.message + " (at byte " + buf + ")";
}

// The one error line every failure prints.
inline void print_error(const std::string& msg) {
  std::fprintf(stderr, "wasmwarp: error: %s\n", msg.c_str());
}

}  // namespace ww::cli
