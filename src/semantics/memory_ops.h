// The meaning of every instruction that touches a memory, a table or a
// segment beyond a single load or store: the bounds checks, their order,
// the trap and the effect, written once as templates over views. Every
// executor instantiates them with its own views: the CPU interpreter and
// the compiled CPU tier over the Store's vectors (store/store_views.h),
// the GPU interpreter kernel and compiled GPU code over per-thread device
// state (exec/gpu/device/dev_memory.cuh, dev_tables.cuh).
//
// A memory view M:
//   uint64_t size() const                       bytes
//   uint32_t pages() const, max_pages() const
//   bool grow_to(uint32_t pages)                false when the host cannot
//   void fill(uint64_t d, uint8_t v, uint32_t n)
//   void move(uint64_t d, uint64_t s, uint32_t n)   as memmove (may overlap)
//   void write(uint64_t d, const uint8_t* src, uint32_t n)
// A data segment view D:  uint64_t size() const (0 once dropped),
//   const uint8_t* bytes() const, void drop()
// A table view T:  uint32_t size() const, uint64_t max_size() const,
//   uint64_t get(uint32_t i) const, void set(uint32_t i, uint64_t v),
//   bool grow_to(uint32_t n, uint64_t init)   false when the host cannot
// An element segment view E:  uint32_t size() const (0 once dropped),
//   uint64_t get(uint32_t i) const, void drop()
//
// Compiles with g++, nvcc and NVRTC (generated code includes it).
#pragma once

#include "semantics/hd.h"
#include "semantics/traps.h"

namespace ww::sem {

inline constexpr uint32_t kGrowFailed = 0xffffffffu;

// Written-granule flags, one byte per 2^kWrittenShift bytes of a memory,
// set by every write on the host (the CPU interpreter, compiled CPU code,
// the bulk ops, host functions), so that a batch returns a used instance
// to its image by copying only what was written (Store::reset_instance).
// 256 bytes: a 64-byte input costs one short copy to restore, and the 512
// flags of a 2-page memory are scanned 64 at a time. A store sets the flag
// of its first byte only; the reset restores the up to 7 bytes it may
// spill into the next granule with the granule.
inline constexpr uint32_t kWrittenShift = 8;

WW_HD inline void mark_written(uint8_t* flags, uint64_t a) { flags[a >> kWrittenShift] = 1; }

// Every granule of [d, d + n); callers have checked the range.
WW_HD inline void mark_written_range(uint8_t* flags, uint64_t d, uint64_t n) {
  if (n == 0) return;
  for (uint64_t g = d >> kWrittenShift, last = (d + n - 1) >> kWrittenShift; g <= last; ++g) flags[g] = 1;
}

// Ranges are checked with 64-bit sums: d and n are below 2^32, so d + n
// cannot wrap, and a zero-length access at exactly the end is in bounds.
WW_HD inline bool range_oob(uint32_t start, uint32_t n, uint64_t size) { return uint64_t(start) + n > size; }

// Views are taken by forwarding reference: executors pass a long-lived view
// (the interpreters) or a temporary built at the use (generated code).
template <class M>
WW_HD inline uint32_t memory_grow(M&& m, uint32_t n) {
  uint32_t old = m.pages();
  uint64_t want = uint64_t(old) + n;
  if (want > m.max_pages()) return kGrowFailed;
  if (n != 0 && !m.grow_to(uint32_t(want))) return kGrowFailed;
  return old;
}

template <class M>
WW_HD inline TrapCode memory_fill(M&& m, uint32_t d, uint32_t v, uint32_t n) {
  if (range_oob(d, n, m.size())) return TrapCode::MemoryOutOfBounds;
  if (n) m.fill(d, uint8_t(v), n);
  return TrapCode::None;
}

template <class M>
WW_HD inline TrapCode memory_copy(M&& m, uint32_t d, uint32_t s, uint32_t n) {
  uint64_t size = m.size();
  if (range_oob(d, n, size) || range_oob(s, n, size)) return TrapCode::MemoryOutOfBounds;
  if (n) m.move(d, s, n);
  return TrapCode::None;
}

template <class M, class D>
WW_HD inline TrapCode memory_init(M&& m, const D& seg, uint32_t d, uint32_t s, uint32_t n) {
  if (range_oob(s, n, seg.size()) || range_oob(d, n, m.size())) return TrapCode::MemoryOutOfBounds;
  if (n) m.write(d, seg.bytes() + s, n);
  return TrapCode::None;
}

template <class D>
WW_HD inline void data_drop(D&& seg) {
  seg.drop();
}

template <class T>
WW_HD inline TrapCode table_get(const T& t, uint32_t i, uint64_t* out) {
  if (i >= t.size()) return TrapCode::TableOutOfBounds;
  *out = t.get(i);
  return TrapCode::None;
}

template <class T>
WW_HD inline TrapCode table_set(T&& t, uint32_t i, uint64_t v) {
  if (i >= t.size()) return TrapCode::TableOutOfBounds;
  t.set(i, v);
  return TrapCode::None;
}

template <class T>
WW_HD inline uint32_t table_size(const T& t) {
  return t.size();
}

// The old size, or kGrowFailed (-1) past the table's maximum or when the
// host cannot allocate.
template <class T>
WW_HD inline uint32_t table_grow(T&& t, uint64_t init, uint32_t n) {
  uint32_t old = t.size();
  if (uint64_t(old) + n > t.max_size()) return kGrowFailed;
  if (n != 0 && !t.grow_to(old + n, init)) return kGrowFailed;
  return old;
}

template <class T>
WW_HD inline TrapCode table_fill(T&& t, uint32_t i, uint64_t v, uint32_t n) {
  if (range_oob(i, n, t.size())) return TrapCode::TableOutOfBounds;
  for (uint32_t k = 0; k < n; ++k) t.set(i + k, v);
  return TrapCode::None;
}

// Overlapping copies within one table behave as if through a buffer: the
// direction follows the order of d and s.
template <class TD, class TS>
WW_HD inline TrapCode table_copy(TD&& dst, const TS& src, uint32_t d, uint32_t s, uint32_t n) {
  if (range_oob(d, n, dst.size()) || range_oob(s, n, src.size())) return TrapCode::TableOutOfBounds;
  if (d <= s) {
    for (uint32_t k = 0; k < n; ++k) dst.set(d + k, src.get(s + k));
  } else {
    for (uint32_t k = n; k-- > 0;) dst.set(d + k, src.get(s + k));
  }
  return TrapCode::None;
}

template <class T, class E>
WW_HD inline TrapCode table_init(T&& t, const E& seg, uint32_t d, uint32_t s, uint32_t n) {
  if (range_oob(s, n, seg.size()) || range_oob(d, n, t.size())) return TrapCode::TableOutOfBounds;
  for (uint32_t k = 0; k < n; ++k) t.set(d + k, seg.get(s + k));
  return TrapCode::None;
}

template <class E>
WW_HD inline void elem_drop(E&& seg) {
  seg.drop();
}

// call_indirect's checks, in the spec's order: the index, then a null
// entry, then `check(ref)`, the executor's signature test (it returns
// IndirectCallTypeMismatch, or HostError for a reference the executor
// cannot call). On success *ref is the table entry.
template <class T, class Check>
WW_HD inline TrapCode call_indirect_ref(const T& t, uint32_t i, Check&& check, uint64_t* ref) {
  if (i >= t.size()) return TrapCode::UndefinedElement;
  uint64_t r = t.get(i);
  if (r == 0) return TrapCode::UninitializedElement;
  TrapCode c = check(r);
  if (c != TrapCode::None) return c;
  *ref = r;
  return TrapCode::None;
}

}  // namespace ww::sem
