// What a GPU batch takes to the device once, before its waves: the
// module's image (code, tables, segments, initial memory) and the `gpu`
// intrinsics' buffers; and how the batch's instance links its imports.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/resources/device_arena.cuh"
#include "exec/gpu/resources/pinned_staging.cuh"
#include "store/store.h"

namespace ww::gpu {

// The `gpu` intrinsics, the stand-ins `unknown` names
// (BatchRequest::unknown_imports), and with a host-call server a stand-in
// for every other function import: the instances call the server instead
// (the stand-in would only run if instantiation called it, and traps).
Result<std::vector<ExternVal>> link_for_batch(Store& store, const Module& m, GpuContext* ctx, bool served,
                                              const std::vector<uint8_t>& unknown = {});

// Values per host-call record: the widest import's arguments or results.
uint32_t host_call_width_of(const GpuImage& img);

// Whether a call may leave the kernel for the request's server: some
// import is not a device intrinsic (a WASI call the device serves may
// still need the host).
bool uses_host_calls(const BatchRequest& req, const GpuImage& img);

// Per function import of the instance: the device intrinsic that serves
// it, the stand-in `unknown` names for it (BatchRequest::unknown_imports),
// or kDevHostImport.
std::vector<uint8_t> import_intrinsics_of(const StoreImpl& s, uint32_t instance,
                                          const std::vector<uint8_t>& unknown = {});

// The read-only module data and the initial per-instance state, on the device.
struct ModuleOnDevice {
  DevModule M{};
  InitState init{};
  const uint32_t* image_words = nullptr;
  uint64_t num_image_words = 0;
  // Sparse: the image padded to whole chunks, then one chunk of zeros.
  const uint8_t* image_chunks = nullptr;
  uint32_t num_image_chunks = 0;
};

// Host arrays gathered into one device allocation and one copy: the
// module's twenty-odd arrays, each its own cudaMalloc and cudaMemcpy, would
// be a visible share of every batch. Each array starts 256-byte
// aligned and takes at least 16 bytes, so that every pointer is a real,
// distinct allocation as DeviceArena::upload makes them. Packed first, so
// that a wave loop can cut them from its one block of device memory.
class PackedModule {
 public:
  template <class T>
  void add(const T** out, const std::vector<T>& v) {
    const size_t off = (bytes_.size() + 255) & ~size_t{255};
    bytes_.resize(off + std::max<size_t>(v.size() * sizeof(T), 16), 0);
    if (!v.empty()) std::memcpy(bytes_.data() + off, v.data(), v.size() * sizeof(T));
    fixups_.push_back([out, off](uint8_t* base) { *out = reinterpret_cast<const T*>(base + off); });
  }
  uint64_t bytes() const { return bytes_.size(); }
  // Sets the pointers of the ModuleOnDevice it was packed for. Through the
  // staging's pinned pieces: a pageable copy of a few hundred bytes takes
  // the host several times as long.
  [[nodiscard]] Status upload(DeviceArena& arena, PinnedStaging& staging);

 private:
  std::vector<uint8_t> bytes_;
  std::vector<std::function<void(uint8_t*)>> fixups_;
};

// `sparse_shift`: the sparse layout's image, in parts of 1 << sparse_shift
// bytes (0: the dense layouts' words). `out` must outlive the upload.
PackedModule pack_module(const GpuImage& img, ModuleOnDevice& out, uint32_t sparse_shift = 0);
// `canvas_before`, when several wave loops (GPUs) draw on gb's canvas at
// once: the canvas as this one uploaded it, kept for the download, which
// then writes back only the pixels this GPU changed. `canvas_mapped`: the
// kernels may draw straight on the host's canvas where it is pinned
// (pinned_for_kernels), and it says whether they do. `ignored_pixels`:
// the device's zeroed counter of set_pixel calls outside the image (the
// wave loop's WaveWords, brought down with its counts).
[[nodiscard]] Status upload_intrinsics(DeviceArena& arena, GpuBatch* gb, DevIntrinsics& I,
                                       unsigned long long* ignored_pixels,
                                       std::vector<uint32_t>* canvas_before = nullptr, bool* canvas_mapped = nullptr);
// The image and the state array back to the host, and `ignored` (the
// device's count of set_pixel calls outside the image, brought down with
// the last wave's counts) added to the batch's; `canvas_down`: the image
// already came down (WaveTransfers::queue_canvas).
[[nodiscard]] Status download_intrinsics(GpuBatch* gb, const DevIntrinsics& I, PinnedStaging& staging,
                                         const std::vector<uint32_t>* canvas_before, bool canvas_down,
                                         unsigned long long ignored);

}  // namespace ww::gpu
