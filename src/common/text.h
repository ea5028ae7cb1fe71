// Small text helpers shared across stages.
#pragma once

#include <string>
#include <string_view>

namespace ww {

// What a user needs of a compiler's output in one line: the first line
// that says "error", else the first non-empty line.
std::string first_error_line(const std::string& log);

// `v` with `decimals` digits after the point ("12.50").
std::string format_fixed(double v, int decimals);

// `text` with every `from` replaced by `to` (a batch's "{i}" and "@index").
std::string replace_all(std::string text, std::string_view from, std::string_view to);

// A module file in the text format: its first non-blank byte opens a form
// or a comment.
bool looks_like_wat(std::string_view bytes);

}  // namespace ww
