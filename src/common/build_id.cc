#include "common/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace ww {
namespace {

struct Search {
  uintptr_t anchor;
  std::string hex;
};

// The build-id note among the object's PT_NOTE segments, when the object
// is the one whose PT_LOAD segments hold the anchor.
int visit(dl_phdr_info* info, size_t, void* data) {
  Search& s = *static_cast<Search*>(data);
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    mine = ph.p_type == PT_LOAD && s.anchor >= start && s.anchor < start + ph.p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const uint8_t* name = p + sizeof n;
      const uint8_t* desc = name + ((n.n_namesz + 3) & ~3u);
      if (desc + n.n_descsz > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char kHex[] = "0123456789abcdef";
        for (uint32_t k = 0; k < n.n_descsz; ++k) {
          s.hex += kHex[desc[k] >> 4];
          s.hex += kHex[desc[k] & 15];
        }
        return 1;
      }
      p = desc + ((n.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // the object, without a build-id
}

}  // namespace

const std::string& build_id() {
  static const std::string id = [] {
    Search s{reinterpret_cast<uintptr_t>(&build_id), {}};
    dl_iterate_phdr(visit, &s);
    return s.hex;
  }();
  return id;
}

}  // namespace ww
