// The headers generated code includes, built into the binary, and the one
// self-contained translation unit a compiler gets: the generated source
// with each of its project includes replaced by the header's text. The
// host C++ compiler reads it from stdin; NVRTC gets it as its program, with
// the few C headers it lacks (stdint.h, math.h, string.h) replaced by stubs.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace ww::codegen {

struct EmbeddedFile {
  const char* path;  // as included: "semantics/semantics.h"
  const char* text;
};

// Generated at build time by cmake/embed_headers.cmake.
const std::vector<EmbeddedFile>& embedded_headers();

enum class Toolchain { HostCxx, Nvrtc };

// `source` with its includes resolved from the embedded headers. A header
// with `#pragma once` is inlined once, any other (traps.def) at each
// include. Errors: an include of a project header that is not embedded.
Result<std::string> amalgamate(const std::string& source, Toolchain tc);

}  // namespace ww::codegen
