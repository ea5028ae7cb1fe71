// The Store's memories, tables and segments as the views that
// semantics/memory_ops.h's templates take, for the executors that run on
// the host (the CPU interpreter and the compiled CPU tier's runtime).
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "semantics/memory_ops.h"
#include "store/store.h"

namespace ww {

struct StoreMemView {
  MemoryInst* m;

  uint64_t size() const { return m->data.size(); }
  uint32_t pages() const { return m->pages; }
  uint32_t max_pages() const { return m->max_pages; }
  bool grow_to(uint32_t p) const {
    try {
      m->resize_pages(p);
    } catch (const std::exception&) {
      return false;
    }
    return true;
  }
  void fill(uint64_t d, uint8_t v, uint32_t n) const {
    std::memset(m->data.data() + d, v, n);
    m->mark_written(d, n);
  }
  void move(uint64_t d, uint64_t s, uint32_t n) const {
    std::memmove(m->data.data() + d, m->data.data() + s, n);
    m->mark_written(d, n);
  }
  void write(uint64_t d, const uint8_t* src, uint32_t n) const {
    std::memcpy(m->data.data() + d, src, n);
    m->mark_written(d, n);
  }
};

struct StoreDataView {
  const uint8_t* p;
  uint64_t n;
  uint8_t* dropped;

  static StoreDataView of(const CompiledModule& cm, InstanceRec& inst, uint32_t seg) {
    const DataSegment& ds = cm.module.datas[seg];
    return {cm.module.bytes.data() + ds.bytes_offset, ds.size, &inst.data_dropped[seg]};
  }
  uint64_t size() const { return *dropped ? 0 : n; }
  const uint8_t* bytes() const { return p; }
  void drop() const { *dropped = 1; }
};

struct StoreTableView {
  TableInst* t;
  uint32_t store_cap;  // StoreLimits::max_table_size

  uint32_t size() const { return uint32_t(t->elems.size()); }
  uint64_t max_size() const { return std::min<uint64_t>(t->type.limits.max.value_or(0xffffffffu), store_cap); }
  uint64_t get(uint32_t i) const { return t->elems[i]; }
  void set(uint32_t i, uint64_t v) const { t->elems[i] = v; }
  bool grow_to(uint32_t n, uint64_t init) const {
    try {
      t->elems.resize(n, init);
    } catch (const std::exception&) {
      return false;
    }
    return true;
  }
};

struct StoreElemView {
  std::vector<uint64_t>* seg;  // emptied by elem.drop

  uint32_t size() const { return uint32_t(seg->size()); }
  uint64_t get(uint32_t i) const { return (*seg)[i]; }
  void drop() const { seg->clear(); }
};

// call_indirect's signature test in the store: canonical type ids.
struct StoreSigCheck {
  const StoreImpl* s;
  uint32_t want;
  TrapCode operator()(uint64_t ref) const {
    return s->funcs[uint32_t(ref - 1)].type_id == want ? TrapCode::None : TrapCode::IndirectCallTypeMismatch;
  }
};

// The views of one instance, as the ops see them.
inline StoreTableView table_view(StoreImpl& s, const InstanceRec& inst, uint32_t t) {
  return {&s.tables[inst.tables[t]], s.limits.max_table_size};
}
inline StoreElemView elem_view(InstanceRec& inst, uint32_t seg) { return {&inst.elem_segments[seg]}; }

}  // namespace ww
