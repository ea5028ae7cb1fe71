// One instance's linear memory on the device, in either layout, and the
// memory view that semantics/memory_ops.h's templates take. The interpreter
// kernel and compiled code address memory only through these.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"

namespace ww::gpu {

inline constexpr uint64_t kDevPageSize = 65536;

template <bool kInterleaved>
struct Mem {
  // Interleaved: byte address a of instance t is in word (a / 4) of its
  // group of 32, and the same word of the 32 instances is contiguous, so a
  // converged warp's access to one address is one 128-byte transaction.
  // Contiguous: instance t's memory is one block at t * capacity.
  uint8_t* base;  // this instance's base (contiguous) or its group's base (interleaved)
  uint32_t lane;
  uint8_t* dirty;  // the page flags of this instance's group of 32

  __device__ __forceinline__ static Mem make(const DevWave& w, uint32_t t) {
    Mem m;
    m.dirty = w.mem_dirty + uint64_t(t >> 5) * w.mem_cap_pages;
    if (kInterleaved) {
      m.base = w.mem + uint64_t(t >> 5) * (w.mem_cap * 32);
      m.lane = t & 31;
    } else {
      m.base = w.mem + uint64_t(t) * w.mem_cap;
      m.lane = 0;
    }
    return m;
  }
  __device__ __forceinline__ uint8_t* byte_ptr(uint64_t a) const {
    if (kInterleaved) return base + (((a >> 2) * 32 + lane) << 2) + (a & 3);
    return base + a;
  }
  __device__ __forceinline__ uint32_t* word_ptr(uint64_t a) const {  // a % 4 == 0
    if (kInterleaved) return reinterpret_cast<uint32_t*>(base + (((a >> 2) * 32 + lane) << 2));
    return reinterpret_cast<uint32_t*>(base + a);
  }
  // Every store marks its page: reading the flag first keeps the common
  // case (already marked) a cached load instead of a store to L2.
  __device__ __forceinline__ void mark(uint64_t a) const {
    uint8_t* f = dirty + (a >> 16);
    if (!*f) *f = 1;
  }
  __device__ __forceinline__ uint8_t load8(uint64_t a) const { return *byte_ptr(a); }
  __device__ __forceinline__ void store8(uint64_t a, uint8_t v) const {
    mark(a);
    *byte_ptr(a) = v;
  }

  // Little-endian loads of 1..8 bytes: aligned words go in one access, the
  // rest byte by byte (wasm allows any alignment).
  __device__ __forceinline__ uint64_t load(uint64_t a, int n) const {
    if ((a & 3) == 0 && n >= 4) {
      uint64_t lo = *word_ptr(a);
      if (n == 4) return lo;
      return lo | (uint64_t(*word_ptr(a + 4)) << 32);
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(load8(a + i)) << (8 * i);
    return v;
  }
  __device__ __forceinline__ void store(uint64_t a, uint64_t v, int n) const {
    if ((a & 3) == 0 && n >= 4) {
      mark(a);
      *word_ptr(a) = uint32_t(v);
      if (n == 8) {
        mark(a + 4);
        *word_ptr(a + 4) = uint32_t(v >> 32);
      }
      return;
    }
    for (int i = 0; i < n; ++i) store8(a + i, uint8_t(v >> (8 * i)));
  }
};

// The memory view of memory_ops.h over one instance: `size` is the
// executor's cached byte size (kept in a register), refreshed here on grow.
template <bool kInterleaved>
struct DevMemView {
  Mem<kInterleaved> m;
  uint64_t* size_bytes;
  uint32_t* pages_slot;  // this instance's entry of DevWave::mem_pages
  uint32_t max;

  __device__ __forceinline__ uint64_t size() const { return *size_bytes; }
  __device__ __forceinline__ uint32_t pages() const { return uint32_t(*size_bytes / kDevPageSize); }
  __device__ __forceinline__ uint32_t max_pages() const { return max; }
  // The capacity was allocated up front (max_pages never exceeds it).
  __device__ __forceinline__ bool grow_to(uint32_t p) const {
    *pages_slot = p;
    *size_bytes = uint64_t(p) * kDevPageSize;
    return true;
  }
  __device__ __forceinline__ void fill(uint64_t d, uint8_t v, uint32_t n) const {
    for (uint32_t k = 0; k < n; ++k) m.store8(d + k, v);
  }
  __device__ __forceinline__ void move(uint64_t d, uint64_t s, uint32_t n) const {
    if (d <= s) {
      for (uint32_t k = 0; k < n; ++k) m.store8(d + k, m.load8(s + k));
    } else {
      for (uint32_t k = n; k-- > 0;) m.store8(d + k, m.load8(s + k));
    }
  }
  __device__ __forceinline__ void write(uint64_t d, const uint8_t* src, uint32_t n) const {
    for (uint32_t k = 0; k < n; ++k) m.store8(d + k, src[k]);
  }
};

}  // namespace ww::gpu
