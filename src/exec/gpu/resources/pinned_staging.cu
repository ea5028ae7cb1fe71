// The staging ring's pinned pieces (pinned_staging.cuh).
#include <new>

#include "common/host_column.h"
#include "exec/gpu/resources/pinned_staging.cuh"

namespace ww::gpu {

// Memory of our own that transparent huge pages back, touched on every core
// and registered: registering it costs a small part of what cudaHostAlloc
// of as much does (bench/scale/alloc_cost.cu), and this runs on the
// start-up thread of every process that uses the GPU, so that 8 pieces so
// pinned cost the start-up no more than 2 cudaHostAlloc'd.
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
