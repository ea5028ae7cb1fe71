// Instance snapshots: an instance's own state in module terms (function
// references as module function indices), so that a batch runs its --init
// exports and start function once and seeds every instance from the result.
#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "runtime/store_internal.h"
#include "store/store.h"

namespace ww {
namespace {

// The first block of 64 written-granule flags at or after `b` (a multiple
// of 64, as is n: whole pages) with a flag set; n when none is. Every
// batch input's reset scans the whole memory's flags: 512 for hash-wasm's
// two pages, 4096 for a Rust module's sixteen.
using DirtyScan = size_t (*)(const uint8_t* flags, size_t b, size_t n);

size_t next_dirty_words(const uint8_t* flags, size_t b, size_t n) {
  for (; b < n; b += 64) {
    uint64_t w[8];
    std::memcpy(w, flags + b, 64);
    if ((w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) != 0) return b;
  }
  return n;
}

#if defined(__x86_64__)
// Two loads and a test a block, where next_dirty_words takes eight loads
// and seven ors.
[[gnu::target("avx2")]] size_t next_dirty_avx2(const uint8_t* flags, size_t b, size_t n) {
  for (; b < n; b += 64) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(flags + b));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(flags + b + 32));
    const __m256i any = _mm256_or_si256(lo, hi);
    if (!_mm256_testz_si256(any, any)) return b;
  }
  return n;
}
#endif

const DirtyScan next_dirty_block = [] {
#if defined(__x86_64__)
  __builtin_cpu_init();  // this runs among the static constructors
  if (__builtin_cpu_supports("avx2")) return &next_dirty_avx2;
#endif
  return &next_dirty_words;
}();

// f(g) for every granule g < n whose written flag is set, in order: 64
// flags tested at a time, a word's set flags found by counting zeros. n
// is a multiple of 64 but where a harness left the flags short.
template <class F>
void for_each_written(const uint8_t* flags, size_t n, F&& f) {
  const size_t whole = n & ~size_t{63};
  for (size_t b = next_dirty_block(flags, 0, whole); b < whole; b = next_dirty_block(flags, b + 64, whole)) {
    uint64_t w[8];
    std::memcpy(w, flags + b, 64);
    for (size_t j = 0; j < 8; ++j)
      for (uint64_t word = w[j]; word != 0; word &= word - 1) f(b + j * 8 + size_t(__builtin_ctzll(word) >> 3));
  }
  for (size_t g = whole; g < n; ++g)
    if (flags[g]) f(g);
}

// Store reference value (function address + 1, 0 = null) <-> module
// function index + 1.
class RefMap {
 public:
  explicit RefMap(const InstanceRec& inst) : funcs_(inst.funcs) {
    for (uint32_t k = 0; k < inst.funcs.size(); ++k) index_.emplace(inst.funcs[k], k);
  }
  bool to_module(uint64_t ref, uint64_t& out) const {
    if (ref == 0) return (out = 0), true;
    auto it = index_.find(uint32_t(ref - 1));
    if (it == index_.end()) return false;
    out = uint64_t(it->second) + 1;
    return true;
  }
  uint64_t to_store(uint64_t ref) const { return ref == 0 ? 0 : uint64_t(funcs_[ref - 1]) + 1; }

 private:
  const std::vector<uint32_t>& funcs_;
  std::unordered_map<uint32_t, uint32_t> index_;
};

bool is_funcref(ValType t) { return t == ValType::FuncRef; }

}  // namespace

Result<InstanceSnapshot> Store::snapshot(uint32_t instance) const {
  const StoreImpl& s = *impl_;
  if (instance >= s.instances.size()) return make_error(kNoOffset, "no such instance");
  const InstanceRec& inst = s.instances[instance];
  const Module& m = inst.module->module;
  const RefMap refs(inst);
  auto foreign = [] {
    return make_error(kNoOffset,
                      "the instance refers to a function outside it (another instance's, or a "
                      "host function it does not import), which a snapshot cannot carry");
  };
  InstanceSnapshot snap;
  for (size_t k = m.num_imported_memories; k < inst.memories.size(); ++k) {
    const MemoryInst& mem = s.memories[inst.memories[k]];
    InstanceSnapshot::Memory sm;
    sm.pages = mem.pages;
    sm.bytes.assign(mem.data.begin(), mem.data.end());
    constexpr uint64_t kBlock = InstanceSnapshot::Memory::kSnapshotBlock;
    for (uint64_t b = 0; b < mem.data.size() / kBlock; ++b) {
      const uint8_t* block = mem.data.data() + b * kBlock;
      const bool zero = block[0] == 0 && std::memcmp(block, block + 1, kBlock - 1) == 0;
      if (!zero) sm.nonzero_blocks.push_back(uint32_t(b));
    }
    snap.memories.push_back(std::move(sm));
  }
  for (size_t k = m.num_imported_globals; k < inst.globals.size(); ++k) {
    const GlobalInst& g = s.globals[inst.globals[k]];
    uint64_t v = g.bits;
    if (is_funcref(g.type.type) && !refs.to_module(g.bits, v)) return foreign();
    snap.globals.push_back(v);
    snap.globals_hi.push_back(g.hi);
  }
  for (size_t k = m.num_imported_tables; k < inst.tables.size(); ++k) {
    const TableInst& t = s.tables[inst.tables[k]];
    std::vector<uint64_t> elems(t.elems.size());
    for (size_t e = 0; e < elems.size(); ++e) {
      elems[e] = t.elems[e];
      if (is_funcref(t.type.elem) && !refs.to_module(t.elems[e], elems[e])) return foreign();
    }
    snap.tables.push_back(std::move(elems));
  }
  for (size_t k = 0; k < inst.elem_segments.size(); ++k) {
    std::vector<uint64_t> seg = inst.elem_segments[k];
    if (is_funcref(m.elems[k].type))
      for (uint64_t& r : seg)
        if (!refs.to_module(r, r)) return foreign();
    snap.elem_segments.push_back(std::move(seg));
  }
  snap.data_dropped = inst.data_dropped;
  return snap;
}

namespace {

// The C library's memcpy, called: GCC inlines a copy of a few hundred
// bytes as `rep movsq`, whose start-up cost is a large share of a small
// instance's reset, where the library uses vector moves.
void* (*const volatile copy_out_of_line)(void*, const void*, size_t) = std::memcpy;

// Copies back the granules of `mem` that writes flagged, each with the up
// to 7 bytes a store at its end spilled into the next, and clears the
// flags; the memory is at the image's size first (a grown one is cut back:
// the pages it gained start zero when it grows again).
void restore_written(MemoryInst& mem, const InstanceSnapshot::Memory& sm) {
  if (mem.pages < sm.pages) {
    mem.resize_pages(sm.pages);
    std::memcpy(mem.data.data(), sm.bytes.data(), sm.bytes.size());
    std::fill(mem.written.begin(), mem.written.end(), uint8_t(0));
    return;
  }
  if (mem.pages > sm.pages) mem.resize_pages(sm.pages);
  uint8_t* flags = mem.written_flags();
  const size_t n = mem.written.size();  // a multiple of 64 (whole pages)
  const uint64_t size = mem.data.size();
  constexpr uint32_t kShift = MemoryInst::kWrittenShift;
  constexpr uint64_t kGranule = uint64_t(1) << kShift;
  // Runs once per batch input (a loop of byte tests would be most of a
  // small module's reset).
  for_each_written(flags, n, [&](size_t k) {
    const uint64_t at = uint64_t(k) << kShift;
    const uint64_t len = at + kGranule + 8 <= size ? kGranule + 8 : kGranule;
    copy_out_of_line(mem.data.data() + at, sm.bytes.data() + at, len);
    flags[k] = 0;
  });
}

bool same_shape(const Module& m, const InstanceSnapshot& snap) {
  return snap.memories.size() == m.memories.size() && snap.globals.size() == m.globals.size() &&
         snap.tables.size() == m.tables.size() && snap.elem_segments.size() == m.elems.size() &&
         snap.data_dropped.size() == m.datas.size();
}

}  // namespace

Status Store::reset_instance(uint32_t instance, const InstanceSnapshot& image) {
  StoreImpl& s = *impl_;
  if (instance >= s.instances.size()) return make_error(kNoOffset, "no such instance");
  InstanceRec& inst = s.instances[instance];
  const Module& m = inst.module->module;
  if (!same_shape(m, image)) return make_error(kNoOffset, "the snapshot is of another module");
  for (size_t k = 0; k < image.memories.size(); ++k)
    restore_written(s.memories[inst.memories[m.num_imported_memories + k]], image.memories[k]);
  // Module-relative references become store addresses through the
  // instance's function index space (RefMap's other direction, without its
  // map: this runs once per batch input).
  auto to_store = [&](bool funcref, uint64_t v) { return funcref && v != 0 ? uint64_t(inst.funcs[v - 1]) + 1 : v; };
  for (size_t k = 0; k < image.globals.size(); ++k) {
    GlobalInst& g = s.globals[inst.globals[m.num_imported_globals + k]];
    g.bits = to_store(is_funcref(g.type.type), image.globals[k]);
    g.hi = k < image.globals_hi.size() ? image.globals_hi[k] : 0;
  }
  for (size_t k = 0; k < image.tables.size(); ++k) {
    TableInst& t = s.tables[inst.tables[m.num_imported_tables + k]];
    const auto& elems = image.tables[k];
    t.elems.resize(elems.size());
    const bool funcref = is_funcref(t.type.elem);
    for (size_t e = 0; e < elems.size(); ++e) t.elems[e] = to_store(funcref, elems[e]);
  }
  // Segments change only by being dropped (emptied).
  for (size_t k = 0; k < image.elem_segments.size(); ++k) {
    auto& seg = inst.elem_segments[k];
    if (seg.size() == image.elem_segments[k].size()) continue;
    const bool funcref = is_funcref(m.elems[k].type);
    seg.clear();
    for (uint64_t r : image.elem_segments[k]) seg.push_back(to_store(funcref, r));
  }
  std::copy(image.data_dropped.begin(), image.data_dropped.end(), inst.data_dropped.begin());
  return Status::Ok();
}

Status Store::capture_delta(uint32_t instance, InstanceDelta& d) const {
  static_assert(InstanceDelta::kGranuleShift == MemoryInst::kWrittenShift);
  const StoreImpl& s = *impl_;
  if (instance >= s.instances.size()) return make_error(kNoOffset, "no such instance");
  const InstanceRec& inst = s.instances[instance];
  const Module& m = inst.module->module;
  auto foreign = [] {
    return make_error(kNoOffset, "the instance refers to a function outside it, which its saved state cannot carry");
  };
  // Runs for every resident instance in every batch: `d`'s vectors are
  // refilled in place.
  d.memories.resize(inst.memories.size() - m.num_imported_memories);
  for (size_t k = m.num_imported_memories; k < inst.memories.size(); ++k) {
    const MemoryInst& mem = s.memories[inst.memories[k]];
    InstanceDelta::Memory& dm = d.memories[k - m.num_imported_memories];
    dm.pages = mem.pages;
    dm.granules.clear();
    dm.bytes.clear();
    const uint64_t size = mem.data.size();
    const size_t flags = std::min(mem.written.size(), size_t(size >> MemoryInst::kWrittenShift));
    for_each_written(mem.written.data(), flags, [&](size_t g) {
      const uint64_t at = uint64_t(g) << MemoryInst::kWrittenShift;
      const uint64_t len = std::min(InstanceDelta::kStride, size - at);
      dm.granules.push_back(uint32_t(g));
      const size_t off = dm.bytes.size();
      dm.bytes.resize(off + InstanceDelta::kStride, 0);
      std::memcpy(dm.bytes.data() + off, mem.data.data() + at, len);
    });
  }
  // Module-relative references through the instance's function index
  // space; a map only when some state holds references.
  std::optional<RefMap> refs;
  auto to_module = [&](uint64_t ref, uint64_t& out) {
    if (ref == 0) return (out = 0), true;
    if (!refs) refs.emplace(inst);
    return refs->to_module(ref, out);
  };
  d.globals.resize(inst.globals.size() - m.num_imported_globals);
  d.globals_hi.resize(d.globals.size());
  for (size_t k = m.num_imported_globals; k < inst.globals.size(); ++k) {
    const GlobalInst& g = s.globals[inst.globals[k]];
    uint64_t& v = d.globals[k - m.num_imported_globals];
    d.globals_hi[k - m.num_imported_globals] = g.hi;
    v = g.bits;
    if (is_funcref(g.type.type) && !to_module(g.bits, v)) return foreign();
  }
  d.tables.resize(inst.tables.size() - m.num_imported_tables);
  for (size_t k = m.num_imported_tables; k < inst.tables.size(); ++k) {
    const TableInst& t = s.tables[inst.tables[k]];
    std::vector<uint64_t>& elems = d.tables[k - m.num_imported_tables];
    elems.assign(t.elems.begin(), t.elems.end());
    if (is_funcref(t.type.elem))
      for (uint64_t& e : elems)
        if (!to_module(e, e)) return foreign();
  }
  d.elem_segments.resize(inst.elem_segments.size());
  for (size_t k = 0; k < inst.elem_segments.size(); ++k) {
    std::vector<uint64_t>& seg = d.elem_segments[k];
    seg.assign(inst.elem_segments[k].begin(), inst.elem_segments[k].end());
    if (is_funcref(m.elems[k].type))
      for (uint64_t& r : seg)
        if (!to_module(r, r)) return foreign();
  }
  d.data_dropped.assign(inst.data_dropped.begin(), inst.data_dropped.end());
  return Status::Ok();
}

Status Store::apply_delta(uint32_t instance, const InstanceDelta& d) {
  StoreImpl& s = *impl_;
  if (instance >= s.instances.size()) return make_error(kNoOffset, "no such instance");
  InstanceRec& inst = s.instances[instance];
  const Module& m = inst.module->module;
  if (d.memories.empty() && d.globals.empty() && d.tables.empty() && d.elem_segments.empty() && d.data_dropped.empty())
    return Status::Ok();  // the image's state
  if (d.memories.size() != m.memories.size() || d.globals.size() != m.globals.size() ||
      d.tables.size() != m.tables.size() || d.elem_segments.size() != m.elems.size() ||
      d.data_dropped.size() != m.datas.size())
    return make_error(kNoOffset, "the saved state is of another module");
  for (size_t k = 0; k < d.memories.size(); ++k) {
    MemoryInst& mem = s.memories[inst.memories[m.num_imported_memories + k]];
    const InstanceDelta::Memory& dm = d.memories[k];
    if (dm.pages > mem.max_pages) return make_error(kNoOffset, "the saved memory exceeds the store's limit");
    if (dm.pages > mem.pages) mem.resize_pages(dm.pages);
    const uint64_t size = mem.data.size();
    // In increasing order: a granule's own bytes come after the spill of
    // the one before.
    for (size_t j = 0; j < dm.granules.size(); ++j) {
      const uint64_t at = uint64_t(dm.granules[j]) << MemoryInst::kWrittenShift;
      if (at >= size) return make_error(kNoOffset, "the saved memory is larger than the instance's");
      std::memcpy(mem.data.data() + at, dm.bytes.data() + j * InstanceDelta::kStride,
                  std::min(InstanceDelta::kStride, size - at));
      mem.mark_written(at, 1);
    }
  }
  auto to_store = [&](bool funcref, uint64_t v) { return funcref && v != 0 ? uint64_t(inst.funcs[v - 1]) + 1 : v; };
  for (size_t k = 0; k < d.globals.size(); ++k) {
    GlobalInst& g = s.globals[inst.globals[m.num_imported_globals + k]];
    g.bits = to_store(is_funcref(g.type.type), d.globals[k]);
    g.hi = k < d.globals_hi.size() ? d.globals_hi[k] : 0;
  }
  for (size_t k = 0; k < d.tables.size(); ++k) {
    TableInst& t = s.tables[inst.tables[m.num_imported_tables + k]];
    t.elems.resize(d.tables[k].size());
    const bool funcref = is_funcref(t.type.elem);
    for (size_t e = 0; e < t.elems.size(); ++e) t.elems[e] = to_store(funcref, d.tables[k][e]);
  }
  for (size_t k = 0; k < d.elem_segments.size(); ++k) {
    auto& seg = inst.elem_segments[k];
    if (seg.size() == d.elem_segments[k].size()) continue;  // segments change only by being dropped
    const bool funcref = is_funcref(m.elems[k].type);
    seg.clear();
    for (uint64_t r : d.elem_segments[k]) seg.push_back(to_store(funcref, r));
  }
  std::copy(d.data_dropped.begin(), d.data_dropped.end(), inst.data_dropped.begin());
  return Status::Ok();
}

namespace detail {

std::optional<std::string> apply_snapshot(StoreImpl& s, InstanceRec& inst, const InstanceSnapshot& snap) {
  const Module& m = inst.module->module;
  if (!same_shape(m, snap)) return "the snapshot is of another module";
  const RefMap refs(inst);
  for (size_t k = 0; k < snap.memories.size(); ++k) {
    MemoryInst& mem = s.memories[inst.memories[m.num_imported_memories + k]];
    const InstanceSnapshot::Memory& sm = snap.memories[k];
    if (sm.pages > mem.max_pages) return "the snapshot's memory exceeds the store's limit";
    if (sm.pages != mem.pages) {
      mem.data.clear();
      mem.written.clear();
      mem.resize_pages(sm.pages);
    }
    // A fresh memory is zero: only the blocks that are not need copying.
    constexpr uint64_t kBlock = InstanceSnapshot::Memory::kSnapshotBlock;
    for (uint32_t b : sm.nonzero_blocks)
      std::memcpy(mem.data.data() + uint64_t(b) * kBlock, sm.bytes.data() + uint64_t(b) * kBlock, kBlock);
  }
  for (size_t k = 0; k < snap.globals.size(); ++k) {
    GlobalInst& g = s.globals[inst.globals[m.num_imported_globals + k]];
    g.bits = is_funcref(g.type.type) ? refs.to_store(snap.globals[k]) : snap.globals[k];
    g.hi = k < snap.globals_hi.size() ? snap.globals_hi[k] : 0;
  }
  for (size_t k = 0; k < snap.tables.size(); ++k) {
    TableInst& t = s.tables[inst.tables[m.num_imported_tables + k]];
    const auto& elems = snap.tables[k];
    t.elems.resize(elems.size());
    for (size_t e = 0; e < elems.size(); ++e) t.elems[e] = is_funcref(t.type.elem) ? refs.to_store(elems[e]) : elems[e];
  }
  for (size_t k = 0; k < snap.elem_segments.size(); ++k) {
    auto& seg = inst.elem_segments[k];
    seg = snap.elem_segments[k];
    if (is_funcref(m.elems[k].type))
      for (uint64_t& r : seg) r = refs.to_store(r);
  }
  inst.data_dropped = snap.data_dropped;
  return std::nullopt;
}

}  // namespace detail
}  // namespace ww
