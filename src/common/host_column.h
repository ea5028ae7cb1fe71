// Per-instance columns of a batch (results, trap codes, memory outputs):
// vectors whose elements are not value-initialised on resize, so that the
// zeroing (or the first write) happens on every core instead of one.
// Value-initialising the columns of an 8.3M-instance batch on one thread,
// mostly page faults, takes far longer than its kernel (bench/gpu/trace.sh's
// mandel row shows the host steps beside the kernel).
// Large columns ask the kernel for transparent huge pages: a fault then
// brings in 2 MiB instead of 4 KiB.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "common/host_workers.h"

namespace ww {

template <class T>
struct NoInitAllocator {
  using value_type = T;
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}

  static constexpr size_t kHugePage = size_t(2) << 20;

  // Large columns are mappings of their own, so they start as zeros: a
  // batch's result columns are then only faulted in. The kernel zeroes
  // each page it maps in, and a memset would write them a second time.
  static bool is_mapping(size_t n) { return n * sizeof(T) >= 2 * kHugePage; }

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (!is_mapping(n)) return std::allocator<T>{}.allocate(n);
    const size_t len = round_up(bytes);
    // Mapped with a huge page's slack, then trimmed to a huge page's alignment.
    void* m = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t base = reinterpret_cast<uintptr_t>(m), at = (base + kHugePage - 1) & ~(kHugePage - 1);
    if (at > base) munmap(m, at - base);
    if (base + kHugePage > at) munmap(reinterpret_cast<void*>(at + len), base + kHugePage - at);
    // Advice only: without transparent huge pages it changes nothing.
    (void)madvise(reinterpret_cast<void*>(at), len, MADV_HUGEPAGE);
    return reinterpret_cast<T*>(at);
  }
  void deallocate(T* p, size_t n) {
    if (!is_mapping(n)) std::allocator<T>{}.deallocate(p, n);
    else munmap(p, round_up(n * sizeof(T)));
  }
  // Default-initialisation: nothing for the arithmetic types of a column.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const NoInitAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static size_t round_up(size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }
};

template <class T>
using Column = std::vector<T, NoInitAllocator<T>>;

// Storage that is zeros when allocated, without writing them: mid-sized
// blocks are mappings of their own (the kernel supplies zero pages as they
// are touched), large ones NoInitAllocator's, small ones calloc's. A
// wasm memory's bytes: a Rust module declares 1 MiB, and instantiating it
// on the host for each GPU batch would otherwise zero pages nothing reads,
// a visible part of a small batch's wall time. Elements are not
// value-initialised: a vector grown within its capacity must zero the new
// elements itself (MemoryInst::resize_pages).
template <class T>
struct ZeroedAllocator : NoInitAllocator<T> {
  ZeroedAllocator() = default;
  template <class U>
  ZeroedAllocator(const ZeroedAllocator<U>&) noexcept {}

  static constexpr size_t kMapBytes = size_t(64) << 10;

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (NoInitAllocator<T>::is_mapping(n)) return NoInitAllocator<T>::allocate(n);
    if (bytes >= kMapBytes) {
      void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) throw std::bad_alloc();
      return static_cast<T*>(m);
    }
    if (void* p = std::calloc(n ? n : 1, sizeof(T))) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (NoInitAllocator<T>::is_mapping(n)) NoInitAllocator<T>::deallocate(p, n);
    else if (bytes >= kMapBytes) munmap(p, bytes);
    else std::free(p);
  }
};

// `column` (empty) resized to `n` zeros, on every core: a fresh mapping is
// only faulted in, smaller ones are zeroed.
template <class T>
void resize_zeroed(Column<T>& column, size_t n) {
  const bool fresh = column.capacity() == 0 && NoInitAllocator<T>::is_mapping(n);
  column.resize(n);
  if (fresh) parallel_fault_in(column.data(), n * sizeof(T));
  else parallel_zero(column.data(), n * sizeof(T));
}

}  // namespace ww
