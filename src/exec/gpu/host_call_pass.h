// Serving the host calls of one launch (DevHostCalls): the records come
// down, the server runs them on the host's workers against each calling
// instance's memory (guest bytes fetched in rounds, as the calls ask for
// them), and results, traps and the bytes the calls wrote go back up for
// the next launch, which resumes those instances.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "exec/gpu/cuda_check.cuh"
#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

class HostCallPass {
 public:
  HostCallPass(HostCallServer& server, DevLayout layout) : server_(server), layout_(layout) {}
  ~HostCallPass();
  HostCallPass(const HostCallPass&) = delete;
  HostCallPass& operator=(const HostCallPass&) = delete;

  // The records and resume state for waves of up to `wave` instances.
  Status alloc(DeviceArena& arena, DevWave& w, uint32_t wave, uint32_t width);
  // Serves what the last launch of wave `w` (the batch's instances from
  // `first`) left; `*calls` is how many (0: nothing to resume).
  Status serve(DevWave& w, uint32_t first, uint32_t* calls, BatchResult& out);

 private:
  // Device buffers grown to the largest pass.
  template <class T>
  Status ensure(T*& p, uint64_t& cap, uint64_t count);
  Status fetch(const DevWave& w, const std::vector<uint64_t>& req, std::vector<uint8_t>& bytes);

  HostCallServer& server_;
  const DevLayout layout_;
  uint32_t wave_ = 0;
  uint64_t* d_req_ = nullptr;
  uint64_t req_cap_ = 0;
  uint32_t* d_granules_ = nullptr;
  uint64_t granules_cap_ = 0;
  uint8_t* d_patches_ = nullptr;
  uint64_t patches_cap_ = 0;
  uint64_t* d_patch_off_ = nullptr;
  uint32_t* d_patch_bytes_ = nullptr;
};

}  // namespace ww::gpu
