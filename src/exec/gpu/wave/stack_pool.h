// The host's half of the interpreter's stack segments (device/dev_stack.cuh):
// sizes them for the module, hands the wave a pool when frames outgrow the
// instances' own, and after each wave tells the loop which instances ran
// out of it and must run again.
#pragma once

#include <stdint.h>

#include "common/result.h"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/resources/device_arena.cuh"

namespace ww::gpu {

// At most this much of the device for segments (unless a request says
// otherwise): a wave whose recursion needs more runs in smaller waves.
inline constexpr uint64_t kStackPoolMaxBytes = uint64_t(8) << 30;

// Slots of a segment for a module whose largest frame has `max_frame_slots`:
// room for two such frames and their records, and at least 1024 (8 KiB a
// column), so that shallow frames share a segment by the hundred.
uint32_t segment_slots(uint32_t max_frame_slots);

class StackPool {
 public:
  // When the pool is taken: at the first wave that needs it (a wave that
  // runs out runs again from the first instance that did), now (for
  // instances that must not run twice), or now when that is the pool's
  // least size, room for each lane's first instance to reach the limits
  // (for instances better not run twice: a larger wave's pool is taken
  // when needed, as it may be gigabytes).
  enum class Upfront { Never, Always, IfLeastSize };
  // Sets `w`'s segment fields; `frames`: the launcher runs on them (the
  // interpreter). Segments exist only when the limits exceed the wave's own
  // stacks. `counters`: the wave's kStackCounters (WaveWords::stack_used),
  // zeroed.
  Status setup(DeviceArena& arena, DevWave& w, const GpuImage& img, uint32_t wave, bool frames, Upfront upfront,
               uint64_t max_bytes, unsigned int* counters);
  struct Outcome {
    uint32_t redo = 0;      // instances, from the first that ran out, to run again
    bool grew = false;      // the pool grew: even a lone instance runs again
    uint32_t wave_cap = 0;  // the most instances a wave may hold from now on; 0 = no cap
  };
  // After a wave of `n` whose trap codes are `traps`; `used`: the wave's
  // w.stack_used counters (32), already on the host.
  Result<Outcome> account(DeviceArena& arena, DevWave& w, const uint8_t* traps, uint32_t n, const unsigned int* used);
  // Whether the wave has segments (and counters to bring down).
  bool on() const { return on_; }
  uint64_t bytes() const { return bytes_; }

 private:
  Status set_pool(DeviceArena& arena, DevWave& w, uint64_t segments);

  bool on_ = false;
  // Segments one instance at the limits may need: the pool holds that
  // many in every lane, since an instance takes from its own lane's part.
  uint64_t one_instance_ = 0;
  uint64_t max_bytes_ = kStackPoolMaxBytes;
  uint64_t bytes_ = 0;
};

}  // namespace ww::gpu
