// Device probing. The CUDA runtime is linked statically and loads the
// driver at run time, so this binary starts (and reports "no GPU") on
// machines without one.
#include <cuda_runtime.h>

#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

bool built_with_cuda() { return true; }

DeviceInfo probe_device() {
  DeviceInfo d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    d.reason = std::string("no usable NVIDIA GPU: ") + cudaGetErrorString(e);
    return d;
  }
  if (count == 0) {
    d.reason = "no NVIDIA GPU found";
    return d;
  }
  cudaDeviceProp p{};
  if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) {
    d.reason = std::string("cannot read GPU properties: ") + cudaGetErrorString(e);
    return d;
  }
  size_t free_b = 0, total_b = 0;
  if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
    d.reason = std::string("cannot read GPU memory: ") + cudaGetErrorString(e);
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.total_bytes = total_b;
  d.free_bytes = free_b;
  return d;
}

}  // namespace ww::gpu
