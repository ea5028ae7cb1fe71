// The `gpu` import module on the CPU: the state one batch of instances
// shares (GpuBatch), the per-Store view of it (GpuContext) and the host
// functions that implement the intrinsics.
//
// Threading: one GpuBatch is shared by every thread of a batch; each thread
// owns its Store and its GpuContext. The image, the state buffer and the
// ignored-pixel counter are accessed atomically (std::atomic_ref), textures
// are read-only once the batch runs, so any number of Stores may call the
// intrinsics at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "decode/decoder.h"  // DecodeOptions, which runtime.h uses
#include "decode/module.h"
#include "runtime/runtime.h"
#include "semantics/intrinsics.h"

// The `gpu` module's host side, for the CPU backend and for the GPU
// backend's batches (its state and images); the arithmetic both share is
// semantics/intrinsics.h's, in namespace gpu.
namespace ww::intrinsics {

using gpu::Intrinsic;
using gpu::kMaxTextureUnits;
using gpu::TextureFilter;

// Tightly packed RGBA8 rows, top row first.
struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4 bytes
};

inline constexpr std::string_view kModuleName = "gpu";

// The fixed name and wasm type of each intrinsic.
struct IntrinsicInfo {
  Intrinsic id;
  const char* name;
  FuncType type;
};
const std::vector<IntrinsicInfo>& intrinsics();
const IntrinsicInfo* find_intrinsic(std::string_view name);

// The batch's output image: one packed RGBA8 word per pixel (pack_rgba8), so
// a pixel is written with one atomic store.
struct OutputImage {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> pixels;  // row-major; starts transparent black
  // No run has drawn on it yet: the GPU zeroes its copy instead of
  // uploading the pixels (33 MB for a 4K image).
  bool blank = true;
  // The pixels registered for the GPU to copy straight into (batch.cc):
  // released before the pixels go, declared after them.
  std::shared_ptr<void> pin;
  Image to_image() const;  // RGBA8 bytes
};

struct GpuBatch {
  uint32_t instance_count = 1;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  std::optional<OutputImage> image;  // set by --image; set_pixel is ignored without one
  // The canvas while several GPUs' batches upload and merge it at once.
  std::mutex canvas_mu;
  std::atomic<uint64_t> ignored_pixels{0};  // set_pixel calls outside the image (or no image)

  std::vector<int32_t> state;  // --state N; read/write/atomic_add trap outside it

  std::vector<Image> textures = std::vector<Image>(kMaxTextureUnits);  // empty = unbound
  TextureFilter filter = TextureFilter::Nearest;

  GpuBatch() = default;
  GpuBatch(const GpuBatch&) = delete;
  GpuBatch& operator=(const GpuBatch&) = delete;

  void set_image_size(uint32_t width, uint32_t height);
  // "texture unit U out of range (0..15)".
  Status bind_texture(int32_t unit, Image image);
  bool texture_bound(int32_t unit) const;
  // Restarts the clock get_time() measures from; call right before running.
  void start_clock() { start = std::chrono::steady_clock::now(); }
  float seconds_since_start() const;
};

// What one Store's host functions see. The batch runner sets
// instance_index before invoking each instance in that Store.
struct GpuContext {
  GpuBatch* batch = nullptr;
  uint32_t instance_index = 0;
};

// For every import of `m` from module "gpu", adds a host function to
// `store` that reads `ctx` (captured by pointer: it must outlive the Store's
// use) and records its ExternVal at the import's position in `resolved`,
// which is resized to m.imports.size(); imports of other modules stay
// nullopt. Call once per Store and module: the ExternVals serve every
// instantiation of the module in that Store.
// Errors (with the import's byte offset): "unknown import gpu.NAME",
// "import gpu.NAME has type (i32) -> (), expected () -> (i32)",
// "import gpu.NAME is a memory, expected a function".
Status resolve_gpu_imports(Store& store, const Module& m, GpuContext* ctx,
                           std::vector<std::optional<ExternVal>>& resolved);

// The same for a module that imports only from "gpu"; any other import is
// "unknown import MOD.NAME".
Result<std::vector<ExternVal>> link_gpu_imports(Store& store, const Module& m, GpuContext* ctx);

// The intrinsics themselves, callable without a Store (tests, other hosts).
// Each returns TrapCode::None or the trap.
TrapCode gpu_set_pixel(GpuBatch& b, int32_t x, int32_t y, float r, float g, float bl, float a);
TrapCode gpu_read_state(GpuBatch& b, int32_t idx, int32_t* out);
TrapCode gpu_write_state(GpuBatch& b, int32_t idx, int32_t val);
TrapCode gpu_atomic_add(GpuBatch& b, int32_t idx, int32_t val, int32_t* old);
TrapCode gpu_texture_sample(const GpuBatch& b, int32_t unit, float u, float v, float out[4]);

}  // namespace ww::intrinsics
