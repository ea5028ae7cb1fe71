// What an op does beyond its slots, read off its body in ops.def rather
// than flagged by hand, so that a new op cannot be left out: a store
// writes linear memory through STORE8/16/32/64, the bulk ops through
// sem::memory_fill/copy/init; each LOAD and STORE is one access (a fused
// op may make several). (Host code only.)
#pragma once

#include <string_view>

#include "bytecode/ops.h"

namespace ww {

namespace detail {
constexpr uint32_t occurrences(std::string_view body, std::string_view w) {
  uint32_t n = 0;
  for (size_t at = body.find(w); at != std::string_view::npos; at = body.find(w, at + w.size())) ++n;
  return n;
}
constexpr bool body_writes_memory(std::string_view body) {
  for (std::string_view w : {"STORE", "sem::memory_fill", "sem::memory_copy", "sem::memory_init"})
    if (occurrences(body, w) > 0) return true;
  return false;
}
inline constexpr bool kBcWritesMemory[] = {
#define WW_OP(Name, text, fmt, flags, ...) body_writes_memory(#__VA_ARGS__),
#include "bytecode/ops.def"
#undef WW_OP
};
static_assert(sizeof(kBcWritesMemory) == kBcOpCount);

inline constexpr uint32_t kBcMemoryAccesses[] = {
#define WW_OP(Name, text, fmt, flags, ...) occurrences(#__VA_ARGS__, "LOAD") + occurrences(#__VA_ARGS__, "STORE"),
#include "bytecode/ops.def"
#undef WW_OP
};
static_assert(sizeof(kBcMemoryAccesses) / sizeof(kBcMemoryAccesses[0]) == kBcOpCount);
}  // namespace detail

inline bool bc_op_writes_memory(BcOp op) { return detail::kBcWritesMemory[static_cast<int>(op)]; }
// The linear-memory loads and stores one op makes.
inline uint32_t bc_op_memory_accesses(BcOp op) { return detail::kBcMemoryAccesses[static_cast<int>(op)]; }

}  // namespace ww
