// Checked CUDA runtime calls, for the GPU backend's host code.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

#define WW_CUDA(call)                                                                                                  \
  do {                                                                                                                 \
    cudaError_t e_ = (call);                                                                                           \
    if (e_ != cudaSuccess)                                                                                             \
      return ::ww::make_error(::ww::kNoOffset, std::string("CUDA error in ") + #call + ": " + cudaGetErrorString(e_)); \
  } while (0)

// `bytes` from host `from` to device `to`, queued on the thread's stream.
// From pageable memory the call returns once the bytes are staged, without
// the stream synchronisation that cudaMemcpy makes first, which would wait
// for the device's queue to drain several times a batch.
// Registered memory would be read by the DMA after the call returns, and
// may change by then: it is copied synchronously.
inline Status copy_to_device(void* to, const void* from, size_t bytes) {
  if (host_range_pinned(from, bytes)) WW_CUDA(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice));
  else WW_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread));
  return Status::Ok();
}

}  // namespace ww::gpu
