// The wave loops' caching allocator of device memory (DeviceArena: one
// block cut into a wave's buffers, the GPU's idle block where it holds
// them, large frees in the background), and device buffers for results
// that stay on the GPU.
#include <algorithm>
#include <vector>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/resources/device_arena.cuh"
#include "exec/gpu/resources/gpu_resources.h"

namespace ww::gpu {
namespace {

// Arenas below this free in place: handing them over costs more than
// their frees, as the spec suite's one-instance batches on the GPU show
// (scripts/gpu-check.sh, part spec), while a large wave block freed in
// place would hold up the batch's outputs (bench/gpu/run.sh, Mandelbrot).
constexpr size_t kBackgroundFreeBytes = size_t(32) << 20;
}  // namespace

// An arena that goes without release_in_background (a batch that failed)
// frees its block: work of its own may still be queued on it, and cudaFree
// waits for that.
DeviceArena::~DeviceArena() {
  for (const Allocation& a : allocs_) cudaFree(a.ptr);
  if (reserved_.ptr) cudaFree(reserved_.ptr);
}

void DeviceArena::reserve(size_t bytes) {
  reserved_on_ = current_device();
  GpuResources& gpu = Resources::process().current();
  DeviceBlock b = gpu.take_idle_block(bytes);
  if (!b.ptr) {
    // A block larger than the idle one: the idle one stays where the
    // memory beside it holds this block and as much again, else it goes
    // first. Not in the background: a cudaFree waits for the device, and
    // one beside the batch slows a 16M-instance batch in slices
    // (bench/gpu/ab.sh's hash-wasm 16M row).
    size_t free_b = 0, total_b = 0;
    if (const uint64_t idle = gpu.idle_block_bytes();
        idle && (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b < bytes + idle))
      gpu.free_idle_block();
    cudaError_t e = cudaMalloc(&b.ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
      // What the plan counted may still be on its way out.
      (void)cudaGetLastError();
      gpu.free_idle_block();
      wait_for_background_frees();
      e = cudaMalloc(&b.ptr, bytes);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // out of memory is not sticky; clear it anyway
      return;
    }
    b.bytes = bytes;
  }
  reserved_ = b;
  block_ = static_cast<uint8_t*>(b.ptr);
  block_left_ = b.bytes;
}

void DeviceArena::release_in_background() {
  if (reserved_.ptr) {
    DeviceScope on(reserved_on_);
    if (Resources::process().gpu(reserved_on_).keep_idle_block(reserved_)) {
      reserved_ = {};
      block_ = nullptr;
      block_left_ = 0;
    }
  }
  size_t total = reserved_.bytes;
  for (const Allocation& a : allocs_) total += a.bytes;
  if (total < kBackgroundFreeBytes) return;  // the destructor frees them
  if (reserved_.ptr) allocs_.push_back({reserved_.ptr, reserved_.bytes});
  reserved_ = {};
  // The host goes on with the batch's outputs meanwhile; the process
  // waits for the frees at exit.
  Resources::process().releaser().post([allocs = std::move(allocs_), device = current_device()] {
    DeviceScope on(device);
    for (const Allocation& a : allocs) cudaFree(a.ptr);
  });
  allocs_.clear();
}

Result<std::shared_ptr<void>> device_buffer(uint64_t bytes) {
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, std::max<uint64_t>(bytes, 16)); e != cudaSuccess) {
    (void)cudaGetLastError();
    return make_error(kNoOffset,
                      "cannot allocate " + std::to_string(bytes) + " bytes of GPU memory: " + cudaGetErrorString(e));
  }
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

Status device_synchronize() {
  WW_CUDA(cudaDeviceSynchronize());
  return Status::Ok();
}

}  // namespace ww::gpu
