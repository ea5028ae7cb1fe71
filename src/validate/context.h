// The validator's view of a module's index spaces, built once from the
// decoded Module so that body validation never walks imports again and never
// relies on Module helpers that assume already-valid indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "decode/module.h"

namespace ww::validate {

struct Context {
  const Module& m;
  std::vector<uint32_t> func_types;  // type index of every function (imports first), checked < types.size()
  std::vector<TableType> tables;
  std::vector<MemoryType> memories;
  std::vector<GlobalType> globals;
  uint32_t num_imported_globals = 0;
  // Functions that may be named by ref.func inside a function body: those
  // referenced from exports, globals and segments (the spec's C.refs).
  std::vector<uint8_t> declared_refs;

  explicit Context(const Module& mod) : m(mod) {}
};

// "unknown local 3"; the spec tests match messages by prefix, and the index
// helps users find the culprit.
inline Error indexed_error(uint64_t offset, const char* what, uint64_t index) {
  return make_error(offset, std::string(what) + " " + std::to_string(index));
}

// Validates the body of defined function `defined_index` (0-based among the
// module's own functions). One FuncValidator is reused for every body so its
// stacks keep their capacity.
class FuncValidator {
 public:
  explicit FuncValidator(const Context& c) : c_(c) {}
  Status validate(uint32_t defined_index);
  // Only the binary-format rules of the body (opcodes, immediates, the final
  // `end` at the body's end), without typing.
  Status check_syntax(uint32_t defined_index);

 private:
  struct Ctrl {
    Opcode op;
    const ValType* start;  // label types of a loop, and the block's inputs
    uint32_t n_start;
    const ValType* end;  // the block's outputs, label types of non-loops
    uint32_t n_end;
    uint32_t height;  // operand stack height at entry (after inputs were popped)
    bool unreachable;
  };

  bool step();
  Error missing_end(uint64_t offset) const;
  bool fail(const char* msg);
  bool fail_index(const char* what, uint64_t index);

  void push(ValType t) { vals_.push_back(t); }
  bool pop(ValType expect);
  bool pop_any(ValType* out);
  bool pop_vals(const ValType* ts, uint32_t n);
  void push_vals(const ValType* ts, uint32_t n) { vals_.insert(vals_.end(), ts, ts + n); }
  bool check_top(const ValType* ts, uint32_t n);
  void push_ctrl(Opcode op, const ValType* s, uint32_t ns, const ValType* e, uint32_t ne);
  bool pop_ctrl(Ctrl* out);
  void set_unreachable();
  bool label(uint32_t depth, const ValType** ts, uint32_t* n);
  bool block_type(const BlockType& bt, const ValType** s, uint32_t* ns, const ValType** e, uint32_t* ne);
  bool apply_sig(const OpcodeInfo& info);
  bool need_memory();
  bool need_table(uint32_t idx, ValType* elem);
  bool need_elem(uint32_t idx, ValType* type);
  bool need_data(uint32_t idx);

  const Context& c_;
  std::vector<ValType> vals_;
  std::vector<Ctrl> ctrls_;
  std::vector<ValType> locals_;
  Instr in_;
  Error error_;
};

}  // namespace ww::validate
