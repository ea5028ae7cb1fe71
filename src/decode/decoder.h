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
};

Result<Module> decode_module(std::vector<uint8_t> bytes, const DecodeOptions& opts = {});

}  // namespace ww
