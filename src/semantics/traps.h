// TrapCode and messages, generated from traps.def. Device-visible.
#pragma once

#include <stdint.h>

#include "semantics/hd.h"

namespace ww {

enum class TrapCode : uint8_t {
#define WW_TRAP(Name, code, msg) Name = code,
#include "semantics/traps.def"
#undef WW_TRAP
};

WW_HD inline const char* trap_message(TrapCode c) {
  switch (c) {
#define WW_TRAP(Name, code, msg) \
  case TrapCode::Name:           \
    return msg;
#include "semantics/traps.def"
#undef WW_TRAP
  }
  return "unknown trap";
}

// A trap's bytecode offset for a trap that no code raised (a memory input
// that did not fit, the timeout).
inline constexpr uint32_t kNoTrapPc = ~0u;

// Short identifier ("MemoryOutOfBounds") for output files and summaries.
WW_HD inline const char* trap_name(TrapCode c) {
  switch (c) {
#define WW_TRAP(Name, code, msg) \
  case TrapCode::Name:           \
    return #Name;
#include "semantics/traps.def"
#undef WW_TRAP
  }
  return "Unknown";
}

}  // namespace ww
