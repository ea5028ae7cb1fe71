// Checked CUDA runtime calls and device allocations freed on every path,
// for the GPU backend's host code.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/result.h"

namespace ww::gpu {

#define WW_CUDA(call)                                                                     \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess)                                                                \
      return ::ww::make_error(::ww::kNoOffset, std::string("CUDA error in ") + #call + ": " + \
                                                   cudaGetErrorString(e_));               \
  } while (0)

class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena() {
    for (const Allocation& a : allocs_) cudaFree(a.ptr);
  }
  // Hands every allocation to the background releaser when together they
  // are large enough for freeing to take milliseconds (cudaFree took about
  // 0.4 ms per GB on an H200); smaller arenas free in the destructor.
  void release_in_background();
  template <class T>
  Status alloc(T** out, size_t count) {
    void* p = nullptr;
    size_t bytes = std::max<size_t>(count * sizeof(T), 16);
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess)
      return make_error(kNoOffset, "GPU out of memory allocating " + std::to_string(bytes) +
                                       " bytes: " + cudaGetErrorString(e));
    allocs_.push_back({p, bytes});
    *out = static_cast<T*>(p);
    return Status::Ok();
  }
  // Frees one allocation before the arena goes (a buffer being replaced).
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
    if (!v.empty()) WW_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    *out = p;
    return Status::Ok();
  }

 private:
  struct Allocation {
    void* ptr;
    size_t bytes;
  };
  std::vector<Allocation> allocs_;
};

// Returns once every background free (DeviceArena::release_in_background)
// has finished: before reading the
// device's free memory or planning the next batch.
void wait_for_background_frees();

}  // namespace ww::gpu
