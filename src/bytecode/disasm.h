// Human-readable listing of translated bytecode, one op per line with its
// word offset within the function:  "0004: i32.add s3, s1, s2".
#pragma once

#include <cstdint>
#include <string>

#include "bytecode/bytecode.h"
#include "decode/module.h"

namespace ww {

// One defined function (index into BytecodeModule::funcs). Undecodable words
// are listed as "<bad op N>" rather than stopping the listing.
std::string disassemble_function(const BytecodeModule& bc, uint32_t defined_index);

// Every defined function with a header line naming it (by
// Module::func_display_name) and its frame layout.
std::string disassemble_module(const BytecodeModule& bc, const Module& m);

}  // namespace ww
