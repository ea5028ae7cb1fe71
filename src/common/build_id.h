// This build of wasmwarp: the linker's GNU build-id of the object that
// holds this code (the executable, or the shared library an embedder
// loaded). The compiled-code cache's index keys by it, so that no build
// takes an index entry that another build wrote.
#pragma once

#include <string>

namespace ww {

// Lowercase hex; empty when the object carries no build-id.
const std::string& build_id();

}  // namespace ww
