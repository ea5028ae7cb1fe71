// Binary format decoder: bytes -> Module. Checks everything the binary
// format itself requires (the spec's "malformed" errors); index and type
// rules are the validator's job.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "decode/module.h"

namespace ww {

struct DecodeOptions {
  // Caps that protect the host from hostile sizes; all are far above what
  // real modules use and what the spec tests need.
  uint32_t max_locals_per_function = 50000;
  // Locals are stored expanded, so a few bytes of input can declare tens of
  // thousands of them; this bounds the whole module's expansion.
  uint64_t max_total_locals = uint64_t{1} << 26;
};

Result<Module> decode_module(std::vector<uint8_t> bytes, const DecodeOptions& opts = {});

}  // namespace ww
