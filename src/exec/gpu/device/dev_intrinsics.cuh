// The `gpu` intrinsics on the device, shared by the interpreter kernel and
// compiled code. The arithmetic is semantics/intrinsics.h's, the same the
// CPU's host functions use, so both backends produce the same bits.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"
#include "semantics/intrinsics.h"
#include "semantics/semantics.h"

namespace ww::gpu {

// Calls intrinsic `id` of instance t. `io(k)` is a reference to 64-bit slot
// k of the call: arguments in, results out (the interpreter passes its
// frame, compiled code a local array).
template <class IO>
__device__ inline TrapCode call_intrinsic(uint8_t id, IO&& io, const DevWave& w, const DevIntrinsics& in, uint32_t t) {
  switch (static_cast<Intrinsic>(id)) {
    case Intrinsic::GetThreadId: io(0) = uint32_t(w.first + t); return TrapCode::None;
    case Intrinsic::InstanceCount: io(0) = w.total; return TrapCode::None;
    case Intrinsic::GetTime: {
      float s = float(double(global_timer_ns() - w.start_ns) * 1e-9);
      io(0) = sem::f32_bits(s);
      return TrapCode::None;
    }
    case Intrinsic::SetPixel: {
      int64_t idx = pixel_index(int32_t(io(0)), int32_t(io(1)), in.image_w, in.image_h);
      if (idx < 0 || in.image == nullptr) {
        atomicAdd(in.ignored_pixels, 1ull);
        return TrapCode::None;
      }
      in.image[idx] = pack_rgba8(sem::f32_from_bits(uint32_t(io(2))), sem::f32_from_bits(uint32_t(io(3))),
                                 sem::f32_from_bits(uint32_t(io(4))), sem::f32_from_bits(uint32_t(io(5))));
      return TrapCode::None;
    }
    case Intrinsic::ReadState: {
      int32_t i = int32_t(io(0));
      if (!state_index_ok(i, in.state_size)) return TrapCode::StateIndexOutOfRange;
      io(0) = uint32_t(atomicAdd(&in.state[i], 0));
      return TrapCode::None;
    }
    case Intrinsic::WriteState: {
      int32_t i = int32_t(io(0));
      if (!state_index_ok(i, in.state_size)) return TrapCode::StateIndexOutOfRange;
      atomicExch(&in.state[i], int32_t(io(1)));
      return TrapCode::None;
    }
    case Intrinsic::AtomicAdd: {
      int32_t i = int32_t(io(0));
      if (!state_index_ok(i, in.state_size)) return TrapCode::StateIndexOutOfRange;
      io(0) = uint32_t(atomicAdd(&in.state[i], int32_t(io(1))));
      return TrapCode::None;
    }
    case Intrinsic::TextureSample: {
      int32_t unit = int32_t(io(0));
      if (unit < 0 || unit >= kMaxTextureUnits || in.textures[unit].rgba == nullptr)
        return TrapCode::TextureUnitUnbound;
      float out[4];
      texture_sample(in.textures[unit], in.filter, sem::f32_from_bits(uint32_t(io(1))),
                     sem::f32_from_bits(uint32_t(io(2))), out);
      for (int c = 0; c < 4; ++c) io(c) = sem::f32_bits(out[c]);
      return TrapCode::None;
    }
    default: return TrapCode::HostError;
  }
}

}  // namespace ww::gpu
