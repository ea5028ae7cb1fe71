#include "common/text.h"

#include <sstream>

namespace ww {

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, first;
  while (std::getline(in, line)) {
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first;
}

}  // namespace ww
