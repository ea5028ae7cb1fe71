// Validation of a decoded module against the WebAssembly 2.0 rules. Errors
// use the spec tests' wording ("type mismatch", "unknown local", ...) and the
// offset of the offending instruction or entry.
#pragma once

#include "common/result.h"
#include "decode/module.h"

namespace ww {

Status validate_module(const Module& m);

}  // namespace ww
