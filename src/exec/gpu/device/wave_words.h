// The counters a wave's host reads after its kernel. Plain C++: the host's
// pinned mirror of them lives where no device header is seen.
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

}  // namespace ww::gpu
