// Pieces of the decoder shared between its .cc files; not part of the
// decoder's public interface.
#pragma once

#include <cstddef>
#include <cstdint>

#include "decode/module.h"

namespace ww::decode_internal {

// Fills m.module_name / m.func_names from the contents of a "name" custom
// section (the bytes after the section's own name). A malformed name section
// is ignored as a whole, as the spec's appendix allows: the module keeps no
// names from it and decoding goes on.
void parse_name_section(const uint8_t* data, size_t size, uint64_t base, Module& m);

}  // namespace ww::decode_internal
