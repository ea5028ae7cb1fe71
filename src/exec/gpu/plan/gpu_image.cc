#include "exec/gpu/plan/gpu_image.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include "bytecode/op_effects.h"
#include "semantics/intrinsics.h"

namespace ww::gpu {

namespace {

bool op_mutates_tables(BcOp op) {
  return op == BcOp::TableSet || op == BcOp::TableGrow || op == BcOp::TableFill || op == BcOp::TableCopy ||
         op == BcOp::TableInit;
}

}  // namespace

uint32_t GpuImage::total_table_cap() const {
  uint32_t n = 0;
  for (uint32_t c : table_cap) n += c;
  return n;
}

uint64_t to_gpu_ref(const StoreImpl& store, const InstanceRec& inst, GpuImage& img, ValType t, uint64_t v) {
  if (v == 0) return 0;
  if (t != ValType::FuncRef) return kForeignRef | v;
  const uint32_t addr = uint32_t(v - 1);
  for (size_t i = 0; i < inst.funcs.size(); ++i)
    if (inst.funcs[i] == addr) return uint64_t(i) + 1;
  for (size_t k = 0; k < img.foreign_funcs.size(); ++k)
    if (img.foreign_funcs[k] == addr) return uint64_t(img.num_funcs) + k + 1;
  // Another instance's function: called like an import the host serves.
  const FuncInst& f = store.funcs[addr];
  img.foreign_funcs.push_back(addr);
  img.func_canon.push_back(f.type_id);
  img.import_intrinsic.push_back(kDevHostImport);
  const FuncType& type = store.types[f.type_id];
  img.import_nparams.push_back(uint32_t(type.params.size()));
  img.import_nresults.push_back(uint32_t(type.results.size()));
  return uint64_t(img.num_funcs) + img.foreign_funcs.size();
}

uint64_t from_gpu_ref(const InstanceRec& inst, const GpuImage& img, ValType t, uint64_t v) {
  if (v == 0) return 0;
  if (v & kForeignRef) return v & ~kForeignRef;
  if (t != ValType::FuncRef) return v;
  if (v - 1 < inst.funcs.size()) return uint64_t(inst.funcs[v - 1]) + 1;
  if (v - 1 - img.num_funcs < img.foreign_funcs.size()) return uint64_t(img.foreign_funcs[v - 1 - img.num_funcs]) + 1;
  return v;
}

namespace {

// Bytes up to the last non-zero one, scanned a word at a time from the end.
size_t nonzero_prefix(std::span<const uint8_t> bytes) {
  size_t n = bytes.size();
  for (uint64_t w = 0; n >= 8; n -= 8) {
    std::memcpy(&w, bytes.data() + n - 8, 8);
    if (w) break;
  }
  while (n > 0 && bytes[n - 1] == 0) --n;
  return n;
}

// Past the end of its active data segments, a fresh instance of a module
// without a start function or an imported memory holds only zeros; none
// when an offset is not a constant. Scanning the whole memory for the last
// non-zero byte would fault in every page of a Rust module's 1 MiB stack,
// a large share of a small batch.
std::optional<uint64_t> segments_extent(const Module& m) {
  if (m.start || m.num_imported_memories) return std::nullopt;
  uint64_t end = 0;
  for (const DataSegment& d : m.datas) {
    if (d.mode != SegmentMode::Active) continue;
    if (d.offset.instrs.size() != 1 || d.offset.instrs[0].op != Opcode::I32Const) return std::nullopt;
    end = std::max(end, uint64_t(uint32_t(d.offset.instrs[0].imm)) + d.size);
  }
  return end;
}

}  // namespace

Result<GpuImage> build_image(StoreImpl& store, uint32_t instance, const std::vector<uint8_t>& import_intrinsics,
                             uint32_t max_table_size, bool fresh) {
  InstanceRec& inst = store.instances[instance];
  const CompiledModule& cm = *inst.module;
  const Module& m = cm.module;
  const BytecodeModule& bc = cm.code.bytecode;
  // Intrinsics, WASI and host call records take one word per value.
  if (m.imports_v128_functions())
    return make_error(kNoOffset,
                      "GPU image: an imported function takes or returns v128, which calls out of "
                      "the GPU cannot carry yet");
  GpuImage img;
  img.code = bc.code;
  img.consts = bc.consts;
  img.br_tables = bc.br_tables;
  img.funcs = bc.funcs;
  img.num_imported_funcs = m.num_imported_funcs;
  img.slot_width = cm.code.bytecode.slot_width;
  img.num_funcs = uint32_t(inst.funcs.size());

  // Canonical type ids: the store's, so that structurally equal types of
  // different indices match in call_indirect exactly as on the CPU.
  img.type_canon = inst.type_ids;
  img.func_canon.resize(inst.funcs.size());
  for (size_t i = 0; i < inst.funcs.size(); ++i) img.func_canon[i] = store.funcs[inst.funcs[i]].type_id;
  img.import_intrinsic = import_intrinsics;
  img.import_intrinsic.resize(m.num_imported_funcs, kDevHostImport);
  for (uint32_t f = 0; f < m.num_imported_funcs; ++f) {
    img.import_nparams.push_back(uint32_t(m.func_type(f).params.size()));
    img.import_nresults.push_back(uint32_t(m.func_type(f).results.size()));
  }

  for (size_t i = 0; i < m.datas.size(); ++i) {
    const DataSegment& d = m.datas[i];
    img.data_offset.push_back(uint32_t(img.data_bytes.size()));
    img.data_size.push_back(d.size);
    img.data_bytes.insert(img.data_bytes.end(), m.bytes.begin() + d.bytes_offset,
                          m.bytes.begin() + d.bytes_offset + d.size);
    img.data_dropped.push_back(inst.data_dropped[i]);
  }
  for (size_t i = 0; i < inst.elem_segments.size(); ++i) {
    const auto& refs = inst.elem_segments[i];
    img.elem_offset.push_back(uint32_t(img.elem_refs.size()));
    img.elem_size.push_back(uint32_t(refs.size()));
    ValType t = m.elems[i].type;
    for (uint64_t r : refs) img.elem_refs.push_back(to_gpu_ref(store, inst, img, t, r));
    img.elem_dropped.push_back(refs.empty() ? 1 : 0);
  }

  // Scan the bytecode once for what decides the per-instance layout.
  bool stores = false;
  for (size_t pc = 0; pc < bc.code.size();) {
    BcDecoded d;
    if (!bc_decode(bc.code.data() + pc, bc.code.size() - pc, &d))
      return make_error(kNoOffset, "GPU image: undecodable bytecode at word " + std::to_string(pc));
    if (op_mutates_tables(d.op)) img.tables_mutable = true;
    if (d.op == BcOp::MemoryGrow) img.uses_memory_grow = true;
    if (bc_op_writes_memory(d.op)) stores = true;
    pc += d.words;
  }
  img.writes_memory = stores || std::any_of(img.import_intrinsic.begin(), img.import_intrinsic.end(), [](uint8_t id) {
                        return (id >= kDevWasiFirst && !dev_stand_in(id)) || intrinsic_on_host(Intrinsic(id));
                      });

  if (!inst.memories.empty()) {
    const MemoryInst& mem = store.memories[inst.memories[0]];
    img.has_memory = true;
    std::span<const uint8_t> written(mem.data.data(), mem.data.size());
    if (const std::optional<uint64_t> e = fresh ? segments_extent(m) : std::nullopt)
      written = written.first(std::min<uint64_t>(*e, written.size()));
    img.memory.assign(written.begin(), written.begin() + ptrdiff_t(nonzero_prefix(written)));
    img.init_pages = mem.pages;
    img.max_pages = mem.max_pages;
  }

  for (size_t g = 0; g < inst.globals.size(); ++g) {
    const GlobalInst& gi = store.globals[inst.globals[g]];
    img.global_types.push_back(gi.type.type);
    img.globals.push_back(is_ref(gi.type.type) ? to_gpu_ref(store, inst, img, gi.type.type, gi.bits) : gi.bits);
  }
  if (m.has_v128_global())
    for (uint32_t g : inst.globals) img.globals.push_back(store.globals[g].hi);

  for (size_t t = 0; t < inst.tables.size(); ++t) {
    const TableInst& ti = store.tables[inst.tables[t]];
    uint32_t size = uint32_t(ti.elems.size());
    uint64_t max = ti.type.limits.max.value_or(0xffffffffu);
    // Growth past the capacity fails the way the spec allows (-1).
    uint64_t limit = max_table_size ? max_table_size : uint64_t(size) + kTableGrowRoom;
    uint32_t cap = img.tables_mutable ? uint32_t(std::min<uint64_t>(max, limit)) : size;
    cap = std::max(cap, size);
    img.table_types.push_back(ti.type.elem);
    img.table_init_size.push_back(size);
    img.table_cap.push_back(cap);
    img.table_offset.push_back(uint32_t(img.table_elems.size()));
    for (uint32_t i = 0; i < cap; ++i)
      img.table_elems.push_back(i < size ? to_gpu_ref(store, inst, img, ti.type.elem, ti.elems[i]) : 0);
  }
  return img;
}

void write_back(StoreImpl& store, uint32_t instance, const GpuImage& img, const InstanceState& st) {
  InstanceRec& inst = store.instances[instance];
  if (img.has_memory && !inst.memories.empty()) {
    MemoryInst& mem = store.memories[inst.memories[0]];
    mem.pages = st.pages;
    mem.data.assign(st.memory.begin(), st.memory.begin() + uint64_t(st.pages) * kPageSize);
  }
  const size_t nglobals = inst.globals.size();
  for (size_t g = 0; g < nglobals && g < st.globals.size(); ++g) {
    GlobalInst& gi = store.globals[inst.globals[g]];
    gi.bits = is_ref(gi.type.type) ? from_gpu_ref(inst, img, gi.type.type, st.globals[g]) : st.globals[g];
    if (gi.type.type == ValType::V128 && nglobals + g < st.globals.size()) gi.hi = st.globals[nglobals + g];
  }
  for (size_t t = 0; t < inst.tables.size() && t < st.table_size.size(); ++t) {
    TableInst& ti = store.tables[inst.tables[t]];
    ti.elems.resize(st.table_size[t]);
    for (uint32_t i = 0; i < st.table_size[t]; ++i)
      ti.elems[i] = from_gpu_ref(inst, img, ti.type.elem, st.table_elems[img.table_offset[t] + i]);
  }
  for (size_t i = 0; i < inst.data_dropped.size() && i < st.data_dropped.size(); ++i)
    inst.data_dropped[i] = st.data_dropped[i];
  for (size_t i = 0; i < inst.elem_segments.size() && i < st.elem_dropped.size(); ++i)
    if (st.elem_dropped[i]) inst.elem_segments[i].clear();
}

}  // namespace ww::gpu
