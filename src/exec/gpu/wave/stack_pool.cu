#include "exec/gpu/wave/stack_pool.h"

#include <algorithm>

#include "common/host_workers.h"
#include "exec/gpu/device/dev_stack.cuh"
#include "exec/gpu/plan/gpu_plan.h"

namespace ww::gpu {

uint32_t segment_slots(uint32_t max_frame_slots) {
  const uint64_t s = std::max<uint64_t>(1024, kSegFrames + 2 * uint64_t(max_frame_slots) + 64);
  return uint32_t((s + 31) / 32 * 32);
}

Status StackPool::setup(DeviceArena& arena, DevWave& w, const GpuImage& img, uint32_t wave, bool frames,
                        Upfront upfront, uint64_t max_bytes, unsigned int* counters) {
  if (max_bytes) max_bytes_ = max_bytes;
  w.stack_pool = nullptr;
  w.stack_per_lane = 0;
  on_ = frames && (w.slots_limit > w.stack_slots || w.depth_limit > w.max_depth);
  if (!on_) return Status::Ok();
  uint32_t largest = 0;
  for (const FunctionCode& f : img.funcs) largest = std::max(largest, f.frame_slots);
  w.seg_slots = segment_slots(largest);
  // A segment switch wastes at most one frame and its record, and the
  // segment is at least twice that: each holds half its slots or more.
  const uint64_t need = uint64_t(w.slots_limit) + 2 * uint64_t(w.depth_limit);
  one_instance_ = 2 * need / w.seg_slots + 2;
  // Whatever the cap, one instance alone always reaches the limits.
  max_bytes_ = std::max(max_bytes_, one_instance_ * 32 * w.seg_slots * 8);
  w.stack_used = counters;
  WW_TRY(arena.alloc(&w.stack_seg, wave));
  WW_TRY(arena.alloc(&w.stack_next, wave));
  const uint64_t least = one_instance_ * 32, segments = std::max<uint64_t>(least, 2 * uint64_t(wave));
  if (upfront == Upfront::Always || (upfront == Upfront::IfLeastSize && segments == least))
    WW_TRY(set_pool(arena, w, segments));
  return Status::Ok();
}

Status StackPool::set_pool(DeviceArena& arena, DevWave& w, uint64_t segments) {
  size_t free_bytes = 0, total = 0;
  WW_CUDA(cudaMemGetInfo(&free_bytes, &total));
  const uint64_t column = uint64_t(w.seg_slots) * 8;
  // The present pool's memory counts as free: it goes first.
  const uint64_t free_now = free_bytes + bytes_;
  const uint64_t room = std::min<uint64_t>(max_bytes_, free_now > kReserveBytes ? free_now - kReserveBytes : 0);
  const uint64_t per_lane = std::min<uint64_t>({segments, room / column, 0xffffffe0u}) / 32;
  const uint64_t before = w.stack_per_lane;
  if (per_lane <= before) return Status::Ok();
  if (w.stack_pool) arena.release(w.stack_pool);
  w.stack_pool = nullptr;
  w.stack_per_lane = 0;
  bytes_ = 0;
  for (uint64_t l : {per_lane, before}) {
    if (l == 0) continue;
    if (!arena.alloc(&w.stack_pool, l * 32 * w.seg_slots).ok()) {
      (void)cudaGetLastError();  // out of memory is not sticky
      continue;
    }
    w.stack_per_lane = uint32_t(l);
    bytes_ = l * 32 * column;
    return Status::Ok();
  }
  return make_error(kNoOffset, "GPU out of memory for a pool of call stack segments");
}

Result<StackPool::Outcome> StackPool::account(DeviceArena& arena, DevWave& w, const uint8_t* traps, uint32_t n,
                                              const unsigned int* used) {
  Outcome o;
  if (!on_) return o;
  // The counters also count the takes that found their lane's part empty.
  if (*std::max_element(used, used + 32) <= w.stack_per_lane) return o;
  const uint32_t r = uint32_t(parallel_find_byte(traps, uint8_t(TrapCode::OutOfStackPool), n));
  if (r >= n) return o;
  o.redo = n - r;
  const uint64_t before = w.stack_per_lane;
  // Grown by four each time: a lone instance that recurses to the limits
  // runs a few times over rather than every batch allocating for it.
  const uint64_t want = before == 0 ? 2 * uint64_t(n) + 32 * 16 : before * 32 * 4;
  WW_TRY(set_pool(arena, w, want));
  o.grew = w.stack_per_lane > before;
  // At its largest, the pool holds about the instances that got their
  // segments before the first that did not.
  if (!o.grew) o.wave_cap = r >= 32 ? r / 32 * 32 : std::max<uint32_t>(n / 2, 1);
  return o;
}

}  // namespace ww::gpu
