// How the spec tools print a value: its type and exact bits (floats also as
// a number), so that two runs' outputs compare by eye.
#pragma once

#include <bit>
#include <cstdio>
#include <string>

#include "wasm/types.h"

namespace ww::spectest {

// `hi`: a v128's high word (shown as two hex words, high first).
inline std::string show_bits(ValType t, uint64_t bits, uint64_t hi = 0) {
  char buf[96];
  switch (t) {
    case ValType::I32: std::snprintf(buf, sizeof buf, "i32:%u", uint32_t(bits)); break;
    case ValType::I64: std::snprintf(buf, sizeof buf, "i64:%llu", (unsigned long long)bits); break;
    case ValType::F32:
      std::snprintf(buf, sizeof buf, "f32:0x%08x (%.9g)", uint32_t(bits), double(std::bit_cast<float>(uint32_t(bits))));
      break;
    case ValType::F64:
      std::snprintf(buf, sizeof buf, "f64:0x%016llx (%.17g)", (unsigned long long)bits, std::bit_cast<double>(bits));
      break;
    case ValType::FuncRef:
    case ValType::ExternRef:
      if (bits == 0) std::snprintf(buf, sizeof buf, "%s:null", valtype_name(t));
      else
        std::snprintf(buf, sizeof buf, "%s:%llu", valtype_name(t),
                      (unsigned long long)(t == ValType::ExternRef ? bits - 1 : bits));
      break;
    case ValType::V128:
      std::snprintf(buf, sizeof buf, "v128:0x%016llx_%016llx", (unsigned long long)hi, (unsigned long long)bits);
      break;
    default: std::snprintf(buf, sizeof buf, "%s:?", valtype_name(t));
  }
  return buf;
}

}  // namespace ww::spectest
