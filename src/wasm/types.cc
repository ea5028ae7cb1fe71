#include "wasm/types.h"

namespace ww {

const char* valtype_name(ValType t) {
  switch (t) {
    case ValType::I32: return "i32";
    case ValType::I64: return "i64";
    case ValType::F32: return "f32";
    case ValType::F64: return "f64";
    case ValType::V128: return "v128";
    case ValType::FuncRef: return "funcref";
    case ValType::ExternRef: return "externref";
  }
  return "?";
}

const char* extern_kind_name(ExternKind k) {
  switch (k) {
    case ExternKind::Func: return "func";
    case ExternKind::Table: return "table";
    case ExternKind::Memory: return "memory";
    case ExternKind::Global: return "global";
  }
  return "?";
}

std::string valtype_list(const std::vector<ValType>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (i) s += ", ";
    s += valtype_name(ts[i]);
  }
  return s;
}

std::string functype_to_string(const FuncType& t) {
  return "(" + valtype_list(t.params) + ") -> (" + valtype_list(t.results) + ")";
}

}  // namespace ww
