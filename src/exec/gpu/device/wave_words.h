// The counters a wave's host reads after its kernel, and what a wave's set-up
// resets. Plain C++: the host's pinned mirror of them lives where no device
// header is seen.
#pragma once

#include <cstdint>

namespace ww::gpu {

// In one block on the device (DevWave's trapped, finished_count, pool_used
// and stack_used, and DevIntrinsics::ignored_pixels point into it), with
// its mirror in pinned memory: one copy behind the kernel brings them all
// down. Counters that atomics hit from many warps keep lines of their own.
inline constexpr uint32_t kStackCounters = 32;  // one per lane
struct WaveWords {
  unsigned long long counts[2];  // trapped, finished
  alignas(128) uint32_t pool_used[2];
  alignas(128) unsigned int stack_used[kStackCounters];
  alignas(128) unsigned long long ignored_pixels;
};

// What a wave's set-up resets beside its words and counts.
struct WaveStart {
  uint64_t* clear = nullptr;  // the sparse layout's chunk table
  uint64_t clear_words = 0;
  bool pool_used = false;  // DevWave::pool_used
  bool stacks = false;     // the stack pool's counters and each instance's segments
  // Each instance's state: not for a resident call (its instances keep
  // theirs) nor for a sliced wave (each slice's own, on its stream).
  bool instances = true;
  bool done = false;  // DevWave::done, the progress count (a resident call's)
};

}  // namespace ww::gpu
