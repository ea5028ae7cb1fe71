// Module instantiation (WebAssembly 2.0, section 4.5.4): import matching,
// allocation, constant expressions, active segments, the start function.
#include <cstring>
#include <string>

#include "runtime/store_internal.h"
#include "store/store.h"

namespace ww {
namespace {

InstantiateError unlinkable(std::string msg) {
  return InstantiateError{InstantiateErrorKind::Unlinkable, std::move(msg)};
}

// Limits subtyping (spec 4.5.2): the provided entity must be at least as
// large as the import asks, and if the import bounds the max, the provided
// entity must declare a max no larger.
bool limits_match(uint64_t have_min, const std::optional<uint64_t>& have_max, const Limits& want) {
  if (have_min < want.min) return false;
  if (want.max) {
    if (!have_max || *have_max > *want.max) return false;
  }
  return true;
}

// Evaluates a constant expression (validator.cc's check_const_expr: consts,
// ref.null, ref.func, global.get and the extended constants i32/i64 add,
// sub and mul) against the instance being built: `funcs` and `globals`
// are its address spaces so far. Validation guarantees the shape; nullopt
// covers modules that skipped it.
std::optional<uint64_t> eval_const(const ConstExpr& e, const StoreImpl& s, const std::vector<uint32_t>& funcs,
                                   const std::vector<uint32_t>& globals) {
  std::vector<uint64_t> stack;
  for (const Instr& in : e.instrs) {
    switch (in.op) {
      case Opcode::I32Const:
      case Opcode::F32Const: stack.push_back(in.imm & 0xffffffffu); break;
      case Opcode::I64Const:
      case Opcode::F64Const: stack.push_back(in.imm); break;
      case Opcode::RefNull: stack.push_back(0); break;
      case Opcode::RefFunc:
        if (in.a >= funcs.size()) return std::nullopt;
        stack.push_back(uint64_t(funcs[in.a]) + 1);  // funcref = store address + 1
        break;
      case Opcode::GlobalGet:
        if (in.a >= globals.size()) return std::nullopt;
        stack.push_back(s.globals[globals[in.a]].bits);
        break;
      case Opcode::V128Const: stack.push_back(v128_word(in.bytes, 0)); break;
      case Opcode::I32Add:
      case Opcode::I32Sub:
      case Opcode::I32Mul:
      case Opcode::I64Add:
      case Opcode::I64Sub:
      case Opcode::I64Mul: {
        if (stack.size() < 2) return std::nullopt;
        const uint64_t b = stack.back();
        stack.pop_back();
        uint64_t& a = stack.back();
        switch (in.op) {
          case Opcode::I32Add: a = uint32_t(uint32_t(a) + uint32_t(b)); break;
          case Opcode::I32Sub: a = uint32_t(uint32_t(a) - uint32_t(b)); break;
          case Opcode::I32Mul: a = uint32_t(uint32_t(a) * uint32_t(b)); break;
          case Opcode::I64Add: a += b; break;
          case Opcode::I64Sub: a -= b; break;
          default: a *= b; break;
        }
        break;
      }
      default: return std::nullopt;
    }
  }
  if (stack.size() != 1) return std::nullopt;
  return stack[0];
}

// A v128 constant expression's high word (0 for any other value).
uint64_t eval_const_hi(const ConstExpr& e, const StoreImpl& s, const std::vector<uint32_t>& globals) {
  if (e.instrs.size() != 1) return 0;
  const Instr& in = e.instrs[0];
  if (in.op == Opcode::V128Const) return v128_word(in.bytes, 8);
  if (in.op == Opcode::GlobalGet && in.a < globals.size()) return s.globals[globals[in.a]].hi;
  return 0;
}

// Checks one import against the provided extern and, when it fits, records
// its address in the instance's index space.
std::optional<InstantiateError> link_import(const StoreImpl& s, const Module& m, const Import& im, const ExternVal& ev,
                                            InstanceRec& inst) {
  const InstantiateError incompatible = unlinkable("incompatible import type");
  if (ev.kind != im.kind) return incompatible;
  switch (im.kind) {
    case ExternKind::Func: {
      if (ev.addr >= s.funcs.size()) return unlinkable("unknown import");
      if (im.func_type >= m.types.size()) return incompatible;
      // Function types must be equal, not just compatible (no subtyping in 2.0).
      if (s.types[s.funcs[ev.addr].type_id] != m.types[im.func_type]) return incompatible;
      inst.funcs.push_back(ev.addr);
      return std::nullopt;
    }
    case ExternKind::Table: {
      if (ev.addr >= s.tables.size()) return unlinkable("unknown import");
      const TableInst& t = s.tables[ev.addr];
      if (t.type.elem != im.table.elem) return incompatible;
      if (!limits_match(t.elems.size(), t.type.limits.max, im.table.limits)) return incompatible;
      inst.tables.push_back(ev.addr);
      return std::nullopt;
    }
    case ExternKind::Memory: {
      if (ev.addr >= s.memories.size()) return unlinkable("unknown import");
      const MemoryInst& mem = s.memories[ev.addr];
      if (!limits_match(mem.pages, mem.declared_max, im.memory.limits)) return incompatible;
      inst.memories.push_back(ev.addr);
      return std::nullopt;
    }
    case ExternKind::Global: {
      if (ev.addr >= s.globals.size()) return unlinkable("unknown import");
      const GlobalInst& g = s.globals[ev.addr];
      if (g.type.type != im.global.type || g.type.mut != im.global.mut) return incompatible;
      inst.globals.push_back(ev.addr);
      return std::nullopt;
    }
  }
  return incompatible;
}

}  // namespace

std::variant<uint32_t, InstantiateError> Store::instantiate(std::shared_ptr<const CompiledModule> cm,
                                                            const std::vector<ExternVal>& imports) {
  return instantiate_impl(std::move(cm), imports, nullptr);
}

std::variant<uint32_t, InstantiateError> Store::instantiate(std::shared_ptr<const CompiledModule> cm,
                                                            const std::vector<ExternVal>& imports,
                                                            const InstanceSnapshot& image) {
  return instantiate_impl(std::move(cm), imports, &image);
}

std::variant<uint32_t, InstantiateError> Store::instantiate_impl(std::shared_ptr<const CompiledModule> cm,
                                                                 const std::vector<ExternVal>& imports,
                                                                 const InstanceSnapshot* image) {
  if (!cm) return unlinkable("no module");
  StoreImpl& s = *impl_;
  const Module& m = cm->module;
  if (imports.size() != m.imports.size())
    return unlinkable("wrong number of imports: the module has " + std::to_string(m.imports.size()) + ", " +
                      std::to_string(imports.size()) + " given");

  InstanceRec inst;
  inst.module = cm;
  for (size_t i = 0; i < imports.size(); ++i)
    if (auto err = link_import(s, m, m.imports[i], imports[i], inst)) return *err;

  // Everything that can fail for lack of resources is settled before the
  // store changes, so such a failure leaves no half-made instance behind.
  for (const TableType& t : m.tables)
    if (t.limits.min > s.limits.max_table_size)
      return unlinkable("table of " + std::to_string(t.limits.min) + " elements exceeds the store's limit of " +
                        std::to_string(s.limits.max_table_size));
  std::vector<MemoryInst> new_memories(m.memories.size());
  for (size_t i = 0; i < m.memories.size(); ++i)
    if (!detail::init_memory(s.limits, m.memories[i], new_memories[i]))
      return unlinkable("memory of " + std::to_string(m.memories[i].limits.min) +
                        " pages exceeds the store's limit of " + std::to_string(s.limits.max_memory_pages) + " pages");

  const uint32_t self = uint32_t(s.instances.size());
  inst.type_ids.reserve(m.types.size());
  for (const FuncType& t : m.types) inst.type_ids.push_back(s.intern_type(t));

  for (size_t i = 0; i < m.funcs.size(); ++i) {
    if (m.funcs[i] >= inst.type_ids.size()) return unlinkable("invalid function type index");
    FuncInst f;
    f.type_id = inst.type_ids[m.funcs[i]];
    f.instance = self;
    f.defined_index = uint32_t(i);
    s.funcs.push_back(std::move(f));
    inst.funcs.push_back(uint32_t(s.funcs.size() - 1));
  }
  for (const TableType& t : m.tables) {
    TableInst ti;
    ti.type = t;
    ti.elems.assign(size_t(t.limits.min), 0);
    s.tables.push_back(std::move(ti));
    inst.tables.push_back(uint32_t(s.tables.size() - 1));
  }
  for (MemoryInst& mem : new_memories) {
    s.memories.push_back(std::move(mem));
    inst.memories.push_back(uint32_t(s.memories.size() - 1));
  }
  // Global initialisers see the imported globals and every function of the
  // instance (ref.func), as the spec's auxiliary instance does.
  for (const Global& g : m.globals) {
    auto v = eval_const(g.init, s, inst.funcs, inst.globals);
    if (!v) return unlinkable("invalid constant expression in a global initialiser");
    s.globals.push_back(
        GlobalInst{g.type, detail::normalize_bits(g.type.type, *v), eval_const_hi(g.init, s, inst.globals)});
    inst.globals.push_back(uint32_t(s.globals.size() - 1));
  }
  for (uint32_t a : inst.globals) inst.global_ptrs.push_back(&s.globals[a].bits);

  inst.elem_segments.resize(m.elems.size());
  for (size_t i = 0; i < m.elems.size(); ++i) {
    auto& refs = inst.elem_segments[i];
    refs.reserve(m.elems[i].init.size());
    for (const ConstExpr& e : m.elems[i].init) {
      auto v = eval_const(e, s, inst.funcs, inst.globals);
      if (!v) return unlinkable("invalid constant expression in an element segment");
      refs.push_back(*v);
    }
  }
  inst.data_dropped.assign(m.datas.size(), 0);
  // Compiled code, when the embedder has it, runs the start function too.
  if (s.native_for) inst.native = s.native_for(cm);

  // From here on the instance exists even if a segment or the start
  // function traps: functions it has already written into imported tables
  // stay callable, so their instance must stay too (linking.wast).
  s.instances.push_back(std::move(inst));
  InstanceRec& rec = s.instances.back();
  auto trap = [&](TrapCode c) {
    s.last_trap = TrapInfo{c, 0, 0};
    return InstantiateError{InstantiateErrorKind::Trap, trap_message(c)};
  };
  // An image already holds what the segments and the start function did.
  if (image) {
    if (auto why = detail::apply_snapshot(s, rec, *image)) return unlinkable(*why);
    return self;
  }

  // Active element segments run as table.init then elem.drop, in order; a
  // segment is bounds-checked as a whole before any of it is written.
  for (size_t i = 0; i < m.elems.size(); ++i) {
    const ElemSegment& seg = m.elems[i];
    auto& refs = rec.elem_segments[i];
    if (seg.mode == SegmentMode::Active) {
      if (seg.table >= rec.tables.size()) return unlinkable("unknown table");
      auto off = eval_const(seg.offset, s, rec.funcs, rec.globals);
      if (!off) return unlinkable("invalid constant expression in an element offset");
      TableInst& t = s.tables[rec.tables[seg.table]];
      const uint64_t start = *off & 0xffffffffu;
      if (start + refs.size() > t.elems.size()) return trap(TrapCode::TableOutOfBounds);
      std::copy(refs.begin(), refs.end(), t.elems.begin() + ptrdiff_t(start));
    }
    // Active and declarative segments are dropped once instantiation has
    // used them; only passive ones stay for table.init.
    if (seg.mode != SegmentMode::Passive) refs.clear();
  }

  for (size_t i = 0; i < m.datas.size(); ++i) {
    const DataSegment& seg = m.datas[i];
    if (seg.mode != SegmentMode::Active) continue;
    if (seg.memory >= rec.memories.size()) return unlinkable("unknown memory");
    auto off = eval_const(seg.offset, s, rec.funcs, rec.globals);
    if (!off) return unlinkable("invalid constant expression in a data offset");
    MemoryInst& mem = s.memories[rec.memories[seg.memory]];
    const uint64_t start = *off & 0xffffffffu;
    if (start + seg.size > mem.data.size()) return trap(TrapCode::MemoryOutOfBounds);
    if (uint64_t(seg.bytes_offset) + seg.size > m.bytes.size()) return unlinkable("data out of range");
    if (seg.size) std::memcpy(mem.data.data() + start, m.bytes.data() + seg.bytes_offset, seg.size);
    rec.data_dropped[i] = 1;
  }

  if (m.start) {
    if (*m.start >= rec.funcs.size()) return unlinkable("unknown function");
    TrapCode c = detail::call(s, *this, rec.funcs[*m.start], nullptr, nullptr);
    if (c != TrapCode::None) return InstantiateError{InstantiateErrorKind::Trap, trap_message(c)};
  }
  return self;
}

}  // namespace ww
