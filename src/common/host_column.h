// Per-instance columns of a batch (results, trap codes, memory outputs):
// vectors whose elements are not value-initialised on resize, so that the
// zeroing (or the first write) happens on every core instead of one.
// Value-initialising the columns of an 8.3M-instance batch took 65 ms on one
// thread of the H200 host, mostly page faults, where its kernel took 0.3 ms.
// Large columns ask the kernel for transparent huge pages: a fault then
// brings in 2 MiB instead of 4 KiB.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace ww {

template <class T>
struct NoInitAllocator {
  using value_type = T;
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}

  static constexpr size_t kHugePage = size_t(2) << 20;

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < 2 * kHugePage) return std::allocator<T>{}.allocate(n);
    void* p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    if (!p) throw std::bad_alloc();
    // Advice only: without transparent huge pages it changes nothing.
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < 2 * kHugePage) std::allocator<T>{}.deallocate(p, n);
    else std::free(p);
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
  bool operator==(const NoInitAllocator<U>&) const noexcept { return true; }
};

template <class T>
using Column = std::vector<T, NoInitAllocator<T>>;

}  // namespace ww
