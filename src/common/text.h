// Small text helpers shared across stages.
#pragma once

#include <string>

namespace ww {

// What a user needs of a compiler's output in one line: the first line
// that says "error", else the first non-empty line.
std::string first_error_line(const std::string& log);

// `v` with `decimals` digits after the point ("12.50").
std::string format_fixed(double v, int decimals);

}  // namespace ww
