// Small helpers shared by the CLI commands.
#pragma once

#include <cstdio>
#include <string>

#include "common/result.h"

namespace ww::cli {

// The one error line every failure prints.
inline void print_error(const std::string& msg) {
  std::fprintf(stderr, "wasmwarp: error: %s\n", msg.c_str());
}

}  // namespace ww::cli
