// The staging ring's pinned pieces (pinned_staging.cuh).
#include <new>

#include "common/host_column.h"
#include "exec/gpu/resources/pinned_staging.cuh"

namespace ww::gpu {

// Memory of our own that transparent huge pages back, touched on every core
// and registered: registering 32 MiB of it took 0.7-0.9 ms on the H200
// host, cudaHostAlloc 10-13 ms (bench/scale/alloc_cost.cu), and this runs
// on the start-up thread of every process that uses the GPU (which took
// 216-230 ms with 8 pieces so pinned, 210-242 ms with 2 cudaHostAlloc'd).
// cudaHostAlloc where registering is refused.
Status PinnedStaging::pin_pieces() {
  const uint64_t bytes = piece_bytes_ * ring_;
  uint8_t* at = nullptr;
  try {
    at = NoInitAllocator<uint8_t>{}.allocate(bytes);
  } catch (const std::bad_alloc&) {
    at = nullptr;  // cudaHostAlloc follows
  }
  if (at) {
    parallel_zero(at, bytes);
    if (cudaHostRegister(at, bytes, cudaHostRegisterDefault) == cudaSuccess) {
      pinned_ = at;
      registered_ = true;
      return Status::Ok();
    }
    (void)cudaGetLastError();  // the refusal is not an error: cudaHostAlloc follows
    NoInitAllocator<uint8_t>{}.deallocate(at, bytes);
  }
  void* p = nullptr;
  WW_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
  pinned_ = static_cast<uint8_t*>(p);
  return Status::Ok();
}

void PinnedStaging::unpin_pieces() {
  if (!pinned_) return;
  if (registered_) {
    (void)cudaHostUnregister(pinned_);
    NoInitAllocator<uint8_t>{}.deallocate(pinned_, piece_bytes_ * ring_);
  } else {
    (void)cudaFreeHost(pinned_);
  }
  pinned_ = nullptr;
  registered_ = false;
}

}  // namespace ww::gpu
