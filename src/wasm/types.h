// Value, function, table, memory and global types of WebAssembly 2.0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ww {

enum class ValType : uint8_t {
  I32 = 0x7F,
  I64 = 0x7E,
  F32 = 0x7D,
  F64 = 0x7C,
  V128 = 0x7B,  // SIMD; a v128 fills two bytecode slots (semantics/simd.h)
  FuncRef = 0x70,
  ExternRef = 0x6F,
};

const char* valtype_name(ValType t);  // "i32", "funcref", ...
inline bool is_ref(ValType t) { return t == ValType::FuncRef || t == ValType::ExternRef; }
inline bool is_num(ValType t) {
  return t == ValType::I32 || t == ValType::I64 || t == ValType::F32 || t == ValType::F64;
}

struct FuncType {
  std::vector<ValType> params;
  std::vector<ValType> results;
  bool operator==(const FuncType&) const = default;
};
std::string functype_to_string(const FuncType& t);  // "(i32, f64) -> (i32)"
inline bool has_v128(const std::vector<ValType>& ts) {
  for (ValType t : ts)
    if (t == ValType::V128) return true;
  return false;
}
inline bool has_v128(const FuncType& t) { return has_v128(t.params) || has_v128(t.results); }
// At least one, and every one an i32 or an f32: 4-byte values.
inline bool all_32bit(const std::vector<ValType>& ts) {
  for (ValType t : ts)
    if (t != ValType::I32 && t != ValType::F32) return false;
  return !ts.empty();
}
std::string valtype_list(const std::vector<ValType>& ts);  // "i32, f64"

struct Limits {
  uint64_t min = 0;
  std::optional<uint64_t> max;
};

struct TableType {
  ValType elem = ValType::FuncRef;
  Limits limits;
};

struct MemoryType {
  Limits limits;  // in 64 KiB pages
};

struct GlobalType {
  ValType type = ValType::I32;
  bool mut = false;
};

enum class ExternKind : uint8_t { Func = 0, Table = 1, Memory = 2, Global = 3 };
const char* extern_kind_name(ExternKind k);  // "func", "table", "memory", "global"

inline constexpr uint32_t kPageSize = 65536;
inline constexpr uint32_t kMaxPages = 65536;  // 4 GiB

}  // namespace ww
