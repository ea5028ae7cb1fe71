#include <map>
#include <string>

#include "common/byte_reader.h"
#include "decode/decoder_internal.h"

namespace ww::decode_internal {

namespace {

constexpr uint8_t kModuleNameSubsection = 0;
constexpr uint8_t kFunctionNamesSubsection = 1;

Status parse(ByteReader& r, std::string& module_name, std::map<uint32_t, std::string>& func_names) {
  int last_id = -1;
  while (!r.at_end()) {
    WW_ASSIGN_OR_RETURN(uint8_t id, r.u8());
    WW_ASSIGN_OR_RETURN(uint32_t size, r.u32());
    WW_ASSIGN_OR_RETURN(ByteReader sub, r.sub(size));
    // Subsections appear at most once each, in increasing id order.
    if (int(id) <= last_id) return r.error("name subsection out of order");
    last_id = id;
    if (id == kModuleNameSubsection) {
      WW_ASSIGN_OR_RETURN(module_name, sub.name());
    } else if (id == kFunctionNamesSubsection) {
      WW_ASSIGN_OR_RETURN(uint32_t n, sub.u32());
      if (n > sub.remaining()) return sub.error("length out of bounds");
      for (uint32_t i = 0; i < n; ++i) {
        WW_ASSIGN_OR_RETURN(uint32_t idx, sub.u32());
        WW_ASSIGN_OR_RETURN(std::string name, sub.name());
        func_names[idx] = std::move(name);
      }
    } else {
      continue;  // local names and later extensions: not used
    }
    if (!sub.at_end()) return sub.error("name subsection size mismatch");
  }
  return Status::Ok();
}

}  // namespace

void parse_name_section(const uint8_t* data, size_t size, uint64_t base, Module& m) {
  ByteReader r(data, size, base);
  std::string module_name;
  std::map<uint32_t, std::string> func_names;
  if (!parse(r, module_name, func_names).ok()) return;
  m.module_name = std::move(module_name);
  m.func_names = std::move(func_names);
}

}  // namespace ww::decode_internal
