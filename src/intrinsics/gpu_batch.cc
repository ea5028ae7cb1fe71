#include "intrinsics/gpu_batch.h"

namespace ww::intrinsics {

// The arithmetic the GPU's kernels share (semantics/intrinsics.h).
using namespace ::ww::gpu;
namespace {
constexpr ValType I32 = ValType::I32, F32 = ValType::F32;
}  // namespace

const std::vector<IntrinsicInfo>& intrinsics() {
  static const std::vector<IntrinsicInfo> table = {
      {Intrinsic::GetThreadId, "get_thread_id", {{}, {I32}}},
      {Intrinsic::InstanceCount, "instance_count", {{}, {I32}}},
      {Intrinsic::GetTime, "get_time", {{}, {F32}}},
      {Intrinsic::SetPixel, "set_pixel", {{I32, I32, F32, F32, F32, F32}, {}}},
      {Intrinsic::ReadState, "read_state", {{I32}, {I32}}},
      {Intrinsic::WriteState, "write_state", {{I32, I32}, {}}},
      {Intrinsic::AtomicAdd, "atomic_add", {{I32, I32}, {I32}}},
      {Intrinsic::TextureSample, "texture_sample", {{I32, F32, F32}, {F32, F32, F32, F32}}},
      {Intrinsic::ReadFile, "read_file", {{I32, I32, I32}, {I32}}},
      {Intrinsic::WriteFile, "write_file", {{I32, I32, I32}, {I32}}},
  };
  return table;
}

const IntrinsicInfo* find_intrinsic(std::string_view name) {
  for (const IntrinsicInfo& info : intrinsics())
    if (name == info.name) return &info;
  return nullptr;
}

Image OutputImage::to_image() const {
  Image img;
  img.width = width;
  img.height = height;
  img.rgba.resize(pixels.size() * 4);
  for (size_t i = 0; i < pixels.size(); ++i) {
    uint32_t p = std::atomic_ref<const uint32_t>(pixels[i]).load(std::memory_order_relaxed);
    for (int c = 0; c < 4; ++c) img.rgba[i * 4 + c] = uint8_t(p >> (8 * c));
  }
  return img;
}

void GpuBatch::set_image_size(uint32_t width, uint32_t height) {
  OutputImage img;
  img.width = width;
  img.height = height;
  img.pixels.assign(size_t(width) * height, 0);
  image = std::move(img);
}

Status GpuBatch::bind_texture(int32_t unit, Image img) {
  if (unit < 0 || unit >= kMaxTextureUnits)
    return make_error(kNoOffset, "texture unit " + std::to_string(unit) + " out of range (0.." +
                                     std::to_string(kMaxTextureUnits - 1) + ")");
  if (img.width == 0 || img.height == 0 || img.rgba.size() != size_t(img.width) * img.height * 4)
    return make_error(kNoOffset, "texture for unit " + std::to_string(unit) + " is empty or malformed");
  textures[size_t(unit)] = std::move(img);
  return Status::Ok();
}

bool GpuBatch::texture_bound(int32_t unit) const {
  return unit >= 0 && unit < kMaxTextureUnits && !textures[size_t(unit)].rgba.empty();
}

float GpuBatch::seconds_since_start() const {
  return float(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

TrapCode gpu_set_pixel(GpuBatch& b, int32_t x, int32_t y, float r, float g, float bl, float a) {
  int64_t at = b.image ? pixel_index(x, y, b.image->width, b.image->height) : -1;
  if (at < 0) {
    b.ignored_pixels.fetch_add(1, std::memory_order_relaxed);
    return TrapCode::None;
  }
  std::atomic_ref<uint32_t>(b.image->pixels[size_t(at)]).store(pack_rgba8(r, g, bl, a), std::memory_order_relaxed);
  return TrapCode::None;
}

// Relaxed ordering: instances of one batch are unordered with respect to
// each other (as GPU threads are); only atomicity is promised.
TrapCode gpu_read_state(GpuBatch& b, int32_t idx, int32_t* out) {
  if (!state_index_ok(idx, uint32_t(b.state.size()))) return TrapCode::StateIndexOutOfRange;
  *out = std::atomic_ref<int32_t>(b.state[uint32_t(idx)]).load(std::memory_order_relaxed);
  return TrapCode::None;
}

TrapCode gpu_write_state(GpuBatch& b, int32_t idx, int32_t val) {
  if (!state_index_ok(idx, uint32_t(b.state.size()))) return TrapCode::StateIndexOutOfRange;
  std::atomic_ref<int32_t>(b.state[uint32_t(idx)]).store(val, std::memory_order_relaxed);
  return TrapCode::None;
}

// Atomic fetch_add on signed integers wraps (two's complement) in C++20,
// matching i32.add.
TrapCode gpu_atomic_add(GpuBatch& b, int32_t idx, int32_t val, int32_t* old) {
  if (!state_index_ok(idx, uint32_t(b.state.size()))) return TrapCode::StateIndexOutOfRange;
  *old = std::atomic_ref<int32_t>(b.state[uint32_t(idx)]).fetch_add(val, std::memory_order_relaxed);
  return TrapCode::None;
}

TrapCode gpu_texture_sample(const GpuBatch& b, int32_t unit, float u, float v, float out[4]) {
  if (!b.texture_bound(unit)) return TrapCode::TextureUnitUnbound;
  const Image& t = b.textures[size_t(unit)];
  TextureView view{t.rgba.data(), t.width, t.height};
  texture_sample(view, b.filter, u, v, out);
  return TrapCode::None;
}

}  // namespace ww::intrinsics
