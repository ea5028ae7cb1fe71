#include "codegen/embedded.h"

#include <map>
#include <set>
#include <string_view>

namespace ww::codegen {
namespace {

// What NVRTC lacks of the C library: it has the device math functions and
// memcpy built in, but no headers. LP64, as the host that fills the
// kernel's parameter structs.
constexpr const char* kNvrtcStdint =
    "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\n"
    "typedef long int64_t;\ntypedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\n"
    "typedef unsigned int uint32_t;\ntypedef unsigned long uint64_t;\n"
    "typedef unsigned long uintptr_t;\n";

struct Amalgamator {
  Toolchain tc;
  std::map<std::string_view, const char*> files;
  std::set<std::string_view> done;
  std::string out;

  Status add(std::string_view text, const std::string& where, int depth) {
    if (depth > 32) return make_error(kNoOffset, "codegen: include depth exceeded at " + where);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) eol = text.size();
      std::string_view line = text.substr(pos, eol - pos);
      pos = eol + 1;
      std::string_view l = line;
      while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
      if (l.starts_with("#pragma once")) continue;
      if (l.starts_with("#include")) {
        std::string_view rest = l.substr(8);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        if (rest.size() > 2 && rest.front() == '"') {
          std::string_view name = rest.substr(1, rest.find('"', 1) - 1);
          auto it = files.find(name);
          if (it == files.end())
            return make_error(kNoOffset,
                              "codegen: " + where + " includes \"" + std::string(name) + "\", which is not embedded");
          std::string_view body = it->second;
          bool once = body.find("#pragma once") != std::string_view::npos;
          if (once && !done.insert(name).second) continue;
          WW_TRY(add(body, std::string(name), depth + 1));
          continue;
        }
        if (tc == Toolchain::Nvrtc && rest.size() > 2 && rest.front() == '<') {
          std::string_view name = rest.substr(1, rest.find('>') - 1);
          if ((name == "stdint.h" || name == "cstdint") && done.insert("<stdint>").second) out += kNvrtcStdint;
          continue;  // math.h, string.h: built into NVRTC
        }
      }
      out.append(line);
      out += '\n';
    }
    return Status::Ok();
  }
};

}  // namespace

Result<std::string> amalgamate(const std::string& source, Toolchain tc) {
  Amalgamator a{tc, {}, {}, {}};
  for (const EmbeddedFile& f : embedded_headers()) a.files[f.path] = f.text;
  a.out.reserve(source.size() + 64 * 1024);
  WW_TRY(a.add(source, "generated source", 0));
  return std::move(a.out);
}

}  // namespace ww::codegen
