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
    for (void* p : ptrs_) cudaFree(p);
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
    ptrs_.push_back(p);
    sizes_.push_back(bytes);
    *out = static_cast<T*>(p);
    return Status::Ok();
  }
  // Frees one allocation before the arena goes (a buffer being replaced).
  void release(void* p) {
    for (void*& q : ptrs_)
      if (q == p) {
        cudaFree(q);
        const size_t k = size_t(&q - ptrs_.data());
        q = ptrs_.back();
        ptrs_.pop_back();
        sizes_[k] = sizes_.back();
        sizes_.pop_back();
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
  std::vector<void*> ptrs_;
  std::vector<size_t> sizes_;
};

// Frees device allocations on a thread of their own, so the host goes on
// with the batch's outputs meanwhile (the process waits for it at exit).
void free_in_background(std::vector<void*> ptrs);
// Returns once every background free has finished: before reading the
// device's free memory or planning the next batch.
void wait_for_background_frees();

}  // namespace ww::gpu
