// Device probing. The CUDA runtime is linked statically and loads the
// driver at run time, so this binary starts (and reports "no GPU") on
// machines without one.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// The runtime's message for a failed first call is often misleading ("CUDA
// driver version is insufficient" on a machine with no NVIDIA driver at
// all): ask the driver library itself which case this is.
std::string why_no_gpu(cudaError_t e) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    bool device_nodes = access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0;
    return device_nodes ? "NVIDIA device nodes exist but the driver library libcuda.so.1 cannot be loaded"
                        : "no NVIDIA GPU or driver on this machine (no libcuda.so.1, no /dev/nvidia*)";
  }
  using GetVersion = int (*)(int*);
  using Init = int (*)(unsigned);
  auto get_version = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion"));
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  int driver = 0;
  std::string why;
  if (get_version && get_version(&driver) == 0 && driver > 0 && driver < CUDART_VERSION) {
    why = "the NVIDIA driver is too old: it supports CUDA " + cuda_version_text(driver) + ", this build needs " +
          cuda_version_text(CUDART_VERSION);
  } else if (init) {
    int rc = init(0);
    constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE
    if (rc == kNoDevice) why = "the NVIDIA driver is loaded but finds no GPU";
  }
  dlclose(lib);
  if (why.empty()) why = std::string("no usable NVIDIA GPU: ") + cudaGetErrorString(e);
  return why;
}

// A device's properties never change in a process; asking for them again
// would be most of the batch's device probe (which runs twice a batch).
cudaError_t device_properties(int device, cudaDeviceProp& out) {
  static std::mutex mu;
  static std::map<int, cudaDeviceProp> known;
  std::lock_guard<std::mutex> g(mu);
  if (auto it = known.find(device); it != known.end()) {
    out = it->second;
    return cudaSuccess;
  }
  const cudaError_t e = cudaGetDeviceProperties(&out, device);
  if (e == cudaSuccess) known.emplace(device, out);
  return e;
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

Status use_device(int ordinal) {
  if (cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess) {
    (void)cudaGetLastError();
    return make_error(kNoOffset, "cannot use GPU " + std::to_string(ordinal) + ": " + cudaGetErrorString(e));
  }
  return Status::Ok();
}

int current_device() {
  int d = 0;
  if (cudaGetDevice(&d) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return d;
}

DeviceInfo probe_device() {
  DeviceInfo d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    d.reason = why_no_gpu(e);
    return d;
  }
  if (count == 0) {
    d.reason = "no NVIDIA GPU found";
    return d;
  }
  cudaDeviceProp p{};
  if ((e = device_properties(current_device(), p)) != cudaSuccess) {
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
  d.resident_threads = uint64_t(p.multiProcessorCount) * uint64_t(p.maxThreadsPerMultiProcessor);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.total_bytes = total_b;
  d.idle_block_bytes = idle_block_bytes();
  d.free_bytes = free_b + d.idle_block_bytes;  // a batch's arena takes it or frees it
  return d;
}

}  // namespace ww::gpu
