// The decoded form of a module: what the binary says, before validation.
// Indices are unchecked here; the validator checks every one of them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wasm/instr_reader.h"
#include "wasm/types.h"

namespace ww {

// A constant expression as the instructions it holds, `end` excluded. In 2.0
// a valid one has exactly one instruction (a const, ref.null, ref.func or
// global.get); the decoder keeps whatever it read so the validator can
// report "constant expression required" / "type mismatch".
struct ConstExpr {
  std::vector<Instr> instrs;
  uint64_t offset = 0;  // module offset of the first instruction
};

struct Import {
  std::string module;
  std::string field;
  ExternKind kind = ExternKind::Func;
  uint32_t func_type = 0;  // kind == Func: type index
  TableType table;         // kind == Table
  MemoryType memory;       // kind == Memory
  GlobalType global;       // kind == Global
  uint64_t offset = 0;
};

struct Global {
  GlobalType type;
  ConstExpr init;
};

struct Export {
  std::string name;
  ExternKind kind = ExternKind::Func;
  uint32_t index = 0;
  uint64_t offset = 0;
};

enum class SegmentMode : uint8_t { Active, Passive, Declarative };

struct ElemSegment {
  SegmentMode mode = SegmentMode::Active;
  uint32_t table = 0;  // Active
  ConstExpr offset;    // Active
  ValType type = ValType::FuncRef;
  // One constant expression per element; the funcidx forms of the binary
  // format are stored as `ref.func idx`.
  std::vector<ConstExpr> init;
  uint64_t offset_in_module = 0;
};

struct DataSegment {
  SegmentMode mode = SegmentMode::Active;  // Active or Passive
  uint32_t memory = 0;
  ConstExpr offset;
  uint32_t bytes_offset = 0;  // the bytes live in Module::bytes
  uint32_t size = 0;
  uint64_t offset_in_module = 0;
};

struct FunctionBody {
  std::vector<ValType> locals;  // declared locals only, expanded (params excluded)
  uint32_t body_offset = 0;     // first instruction byte, in Module::bytes
  uint32_t body_end = 0;        // one past the function's final `end`
  uint64_t size_offset = 0;     // offset of the body's size field (for errors)
};

struct Module {
  std::vector<uint8_t> bytes;  // the whole binary; bodies and data point into it

  std::vector<FuncType> types;
  std::vector<Import> imports;
  std::vector<uint32_t> funcs;       // type index of each defined function
  std::vector<TableType> tables;     // defined tables
  std::vector<MemoryType> memories;  // defined memories
  std::vector<Global> globals;       // defined globals
  std::vector<Export> exports;
  std::optional<uint32_t> start;
  std::vector<ElemSegment> elems;
  std::optional<uint32_t> data_count;
  std::vector<FunctionBody> codes;  // parallel to funcs
  std::vector<DataSegment> datas;

  // From the optional "name" custom section; malformed name sections are
  // ignored, as the spec allows.
  std::string module_name;
  std::map<uint32_t, std::string> func_names;

  // Counts of imports of each kind: imported entities come first in each
  // index space.
  uint32_t num_imported_funcs = 0;
  uint32_t num_imported_tables = 0;
  uint32_t num_imported_memories = 0;
  uint32_t num_imported_globals = 0;

  uint32_t code_section_size = 0;  // bytes of the code section's contents

  // Whole index spaces (imports first).
  uint32_t num_funcs() const { return num_imported_funcs + uint32_t(funcs.size()); }
  uint32_t num_tables() const { return num_imported_tables + uint32_t(tables.size()); }
  uint32_t num_memories() const { return num_imported_memories + uint32_t(memories.size()); }
  uint32_t num_globals() const { return num_imported_globals + uint32_t(globals.size()); }

  // Type index of function `funcidx` in the whole index space. Requires a
  // valid index (after validation, or checked by the caller).
  uint32_t func_type_index(uint32_t funcidx) const;
  const FuncType& func_type(uint32_t funcidx) const { return types[func_type_index(funcidx)]; }
  TableType table_type(uint32_t tableidx) const;
  MemoryType memory_type(uint32_t memidx) const;
  GlobalType global_type(uint32_t globalidx) const;
  const Import& import_of(ExternKind kind, uint32_t index) const;  // index < num_imported_*

  // "name" section name, export name, or "func[N]".
  std::string func_display_name(uint32_t funcidx) const;
  // A global of type v128, imported or defined.
  bool has_v128_global() const {
    for (const Import& im : imports)
      if (im.kind == ExternKind::Global && im.global.type == ValType::V128) return true;
    for (const Global& g : globals)
      if (g.type.type == ValType::V128) return true;
    return false;
  }
  // An imported function that takes or returns a v128.
  bool imports_v128_functions() const {
    for (const Import& im : imports)
      if (im.kind == ExternKind::Func && has_v128(types[im.func_type])) return true;
    return false;
  }
};

}  // namespace ww
