// Device memory for a wave loop, freed on every path: a caching allocator
// that cuts a wave's buffers from one block (the GPU's idle block where
// that holds them) and hands large frees to the background releaser.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/resources/gpu_resources.h"

namespace ww::gpu {

class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena();
  // Hands every allocation to the background releaser when together they
  // are large enough for freeing to take milliseconds (cudaFree's time grows
  // with the bytes: bench/scale/alloc_cost.cu); smaller arenas free in the
  // destructor. The
  // reserved block goes back to its GPU's idle block where it may, for the
  // next batch to take at once: nothing may still run on it.
  void release_in_background();
  // One allocation that later alloc()s are cut from while they fit, 256
  // bytes aligned: a wave's twenty-odd buffers each from cudaMalloc would
  // cost milliseconds a batch. It is the GPU's idle block when that
  // holds `bytes`. Without the memory for it nothing changes: allocations
  // come from cudaMalloc.
  void reserve(size_t bytes);
  template <class T>
  Status alloc(T** out, size_t count) {
    void* p = nullptr;
    size_t bytes = std::max<size_t>(count * sizeof(T), 16);
    const size_t cut = (bytes + 255) & ~size_t{255};
    if (cut <= block_left_) {
      *out = reinterpret_cast<T*>(block_);
      block_ += cut;
      block_left_ -= cut;
      return Status::Ok();
    }
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess)
      return make_error(kNoOffset,
                        "GPU out of memory allocating " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(e));
    allocs_.push_back({p, bytes});
    *out = static_cast<T*>(p);
    return Status::Ok();
  }
  // Frees one allocation before the arena goes (a buffer being replaced);
  // one cut from the reserved block stays until the block goes.
  void release(void* p) {
    for (Allocation& a : allocs_)
      if (a.ptr == p) {
        cudaFree(a.ptr);
        a = allocs_.back();
        allocs_.pop_back();
        return;
      }
  }
  template <class T>
  Status upload(const T** out, const std::vector<T>& v) {
    T* p;
    WW_TRY(alloc(&p, v.size()));
    if (!v.empty()) WW_TRY(copy_to_device(p, v.data(), v.size() * sizeof(T)));
    *out = p;
    return Status::Ok();
  }

 private:
  struct Allocation {
    void* ptr;
    size_t bytes;
  };
  std::vector<Allocation> allocs_;
  DeviceBlock reserved_;      // not in allocs_
  int reserved_on_ = 0;       // its GPU
  uint8_t* block_ = nullptr;  // what is left of the reserved block
  size_t block_left_ = 0;
};

}  // namespace ww::gpu
