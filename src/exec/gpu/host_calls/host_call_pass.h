// Serving the host calls of one launch (DevHostCalls): the records come
// down, the server runs them on the host's workers against each calling
// instance's memory (guest bytes fetched in rounds, as the calls ask for
// them), and results, traps and the bytes the calls wrote go back up for
// the next launch, which resumes those instances.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "common/result.h"
#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/resources/device_arena.cuh"

namespace ww::gpu {

class HostCallPass final : public DeviceFiles {
 public:
  // `img` names the imports and the other instances' functions the
  // records' calls go to.
  HostCallPass(HostCallServer& server, DevLayout layout, const GpuImage& img)
      : server_(server), layout_(layout), img_(img) {}
  ~HostCallPass() override;
  HostCallPass(const HostCallPass&) = delete;
  HostCallPass& operator=(const HostCallPass&) = delete;

  // Device bytes per instance of a wave: records, resume state, room for
  // `leave_words` words of compiled code's saved frames, and the slots of
  // the descriptors whose reads the device serves (`device_fds`).
  static uint64_t bytes_per_instance(uint32_t width, uint64_t leave_words, bool device_fds);
  // The records and resume state for waves of up to `wave` instances, and
  // the device's WASI state (`in.wasi`) when the server lets it serve
  // WASI calls.
  Status alloc(DeviceArena& arena, DevWave& w, DevIntrinsics& in, uint32_t wave, uint32_t width, uint64_t leave_words);
  // A wave's instances start afresh on the device.
  Status begin_wave(const DevWave& w, const DevIntrinsics& in);
  // Serves what the last launch of wave `w` (the batch's instances from
  // `first`) left; `*calls` is how many (0: nothing to resume). What the
  // launch wrote to stdout and stderr on the device reaches the server
  // first.
  Status serve(DevWave& w, const DevIntrinsics& in, uint32_t first, uint32_t* calls, RunResult& out);
  // The device's stdout and stderr log to the server, then empty (serve
  // does this first; a stopped wave's finished instances keep theirs).
  Status drain_log(const DevIntrinsics& in, uint32_t first, RunResult& out);
  // After a wave's last launch: its proc_exit codes to the server.
  Status end_wave(const DevWave& w, const DevIntrinsics& in, uint32_t first);
  int32_t upload(const DeviceFile& f) override;
  uint64_t table_id() const override { return table_id_; }

 private:
  // Device buffers grown to the largest pass.
  template <class T>
  Status ensure(T*& p, uint64_t& cap, uint64_t count);
  Status fetch(const DevWave& w, const std::vector<uint64_t>& req, std::vector<uint8_t>& bytes);
  Status alloc_wasi(DeviceArena& arena, const DeviceWasi& dw, DevWasi& d, uint32_t wave);
  Status alloc_files(DeviceArena& arena, const DeviceWasi& dw, DevWasi& d, uint32_t wave);
  // The descriptors the pass's calls gave the device, into their slots.
  Status install_fds(const DevWave& w, const DevIntrinsics& in, const std::vector<uint32_t>& fds);

  HostCallServer& server_;
  const DevLayout layout_;
  const GpuImage& img_;
  uint32_t wave_ = 0;
  uint64_t* d_req_ = nullptr;
  uint64_t req_cap_ = 0;
  uint32_t* d_granules_ = nullptr;
  uint64_t granules_cap_ = 0;
  uint8_t* d_patches_ = nullptr;
  uint64_t patches_cap_ = 0;
  uint64_t* d_patch_off_ = nullptr;
  uint32_t* d_patch_bytes_ = nullptr;
  std::vector<uint8_t> log_;  // the host's copy of the device's log
  // The device's files (DevWasi::file_*): `upload` runs on the workers.
  std::mutex files_mu_;
  const uint64_t table_id_ = next_table_id();
  // The GPU of the wave loop that made it: upload() runs on the host's
  // workers, whose threads are on GPU 0 unless told.
  const int device_ = current_device();
  static uint64_t next_table_id();
  DevWasi files_{};  // the table's pointers
  uint32_t files_count_ = 0;
  uint64_t files_bytes_ = 0, files_budget_ = 0;
  std::vector<uint8_t*> file_buffers_;
  uint32_t* d_installs_ = nullptr;
  uint64_t installs_cap_ = 0;
};

}  // namespace ww::gpu
