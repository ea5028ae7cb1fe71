// WebAssembly values as the command line handles them: a public
// wasmwarp::ValueType and raw bits (i32 and f32 in the low half), the form
// the API takes arguments in and gives results back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wasmwarp/wasmwarp.h"

namespace ww::cli {

using ValType = wasmwarp::ValueType;

struct Value {
  ValType type = ValType::I32;
  uint64_t bits = 0;
  uint64_t hi = 0;  // a v128's bytes 8-15 (bits: bytes 0-7)

  static Value i32(int32_t v) { return {ValType::I32, uint32_t(v)}; }
  static Value i64(int64_t v) { return {ValType::I64, uint64_t(v)}; }
  static Value f32_bits(uint32_t b) { return {ValType::F32, b}; }
  static Value f64_bits(uint64_t b) { return {ValType::F64, b}; }
  static Value null(ValType t) { return {t, 0}; }
};

inline const char* valtype_name(ValType t) { return wasmwarp::type_name(t); }
inline bool is_num(ValType t) {
  return t == ValType::I32 || t == ValType::I64 || t == ValType::F32 || t == ValType::F64;
}
inline std::string valtype_list(const std::vector<ValType>& types) { return wasmwarp::type_list(types); }

}  // namespace ww::cli
