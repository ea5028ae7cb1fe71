// Text form of WebAssembly values on the command line and in CSV/JSON files.
// Floats print so that they read back to the same bits (shortest round trip,
// NaN payloads as "nan:0x..."), so any printed result can be fed back in as
// an argument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/values.h"
#include "common/result.h"

namespace ww::cli {

// Integers: decimal or 0x-hex with optional sign, in the signed or unsigned
// range of the type (i32 accepts -2147483648 .. 4294967295).
// Floats: decimal, hex floats (0x1.8p3), inf, -inf, nan, -nan, nan:0xPAYLOAD.
// externref: "null", "ref.extern N" or "N"; funcref: "null" only.
// v128: "0x" and up to 32 hex digits (a 128-bit number, lane 0 in the low
// bits), or a shape and its lanes as in the text format: "i32x4 1 2 3 4".
Result<Value> parse_value(std::string_view text, ValType type);

// Signed decimal for integers; see above for floats; refs as "null",
// "ref.func", "ref.extern N"; v128 as "0x" and 32 hex digits.
std::string format_value(const Value& v);

Result<uint32_t> parse_f32_bits(std::string_view text);
Result<uint64_t> parse_f64_bits(std::string_view text);
std::string format_f32(uint32_t bits);
std::string format_f64(uint64_t bits);

// Non-negative decimal or 0x-hex count/address, for options like -n and ADDR.
Result<uint64_t> parse_u64(std::string_view text);

}  // namespace ww::cli
