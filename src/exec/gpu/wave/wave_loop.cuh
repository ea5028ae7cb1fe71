// A GPU batch's wave loop: one wave's buffers and the steps of a wave
// (set up the instances, launch until no instance waits for the host,
// bring the rows down), composed of parts that each own their state: the
// context every part reads (wave_context.cuh), the device memory
// (wave_buffers.cuh), the host's transfers (wave_transfers.cuh) and the
// launches (wave_launches.cuh). run_batch (batch_run.cu) drives it over
// the waves of a batch; a ResidentBatch (resident_batch.cu) keeps one wave
// on the device and runs call after call on it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/plan/gpu_plan.h"
#include "exec/gpu/wave/wave_buffers.cuh"
#include "exec/gpu/wave/wave_context.cuh"
#include "exec/gpu/wave/wave_launches.cuh"
#include "exec/gpu/wave/wave_transfers.cuh"

namespace ww::gpu {

// What a batch needs before its first wave (run_batch, make_resident):
// the device, the launcher, the instances' initial state on the host and
// its image, the request with its layout and entry stack resolved, and
// the plan. Its address must not change: the host functions the store
// links hold `ctx`.
struct PreparedBatch {
  DeviceInfo dev;
  KernelLauncher* launcher = nullptr;
  GpuBatch fallback_batch;
  GpuContext ctx{};
  std::unique_ptr<Store> own_store;
  Store* store = nullptr;
  uint32_t instance = 0;
  GpuImage img;
  BatchRequest resolved;                          // a copy, made only when something changed
  const BatchRequest* rq = nullptr;               // the request, or `resolved`
  uint64_t file_budget = 0, host_call_bytes = 0;  // what the plan adds for files and host calls
  BatchPlan plan;
};
Status prepare_batch(const BatchRequest& req, PreparedBatch& p, StepTrace& trace);
// The plan for p.dev.free_bytes.
Status plan_batch(PreparedBatch& p);
// Chained calls (BatchRequest::then) of defined functions, with arguments
// that fit them.
Status check_then(const BatchRequest& req);

// One batch's waves.
class WaveLoop {
 public:
  WaveLoop(const BatchRequest& req, KernelLauncher& launcher, StoreImpl& S, uint32_t instance, const GpuImage& img,
           const BatchPlan& plan, Clock::time_point t_start)
      : c_(req, launcher, S, instance, img, plan, t_start), b_(c_), x_(c_, b_), l_(c_, b_, x_) {}
  WaveLoop(const WaveLoop&) = delete;
  WaveLoop& operator=(const WaveLoop&) = delete;

  // The module on the device, the staging held, the wave's buffers cut
  // from one block, the call's words; the host's result arrays when the
  // request gave none.
  Status setup(RunResult& out);
  // Runs instances [first, first + n); `*redo` becomes the number of them,
  // from the first that ran out of the sparse pool on, that must run again
  // (0 when none did).
  Status run_wave(uint32_t first, uint32_t n, RunResult& out, uint32_t* redo);
  uint32_t next_wave_size() const { return b_.next_wave_size(); }
  // The last wave's rerun is owed even to a lone instance: the pool it ran
  // out of grew.
  bool rerun_owed() const { return b_.stack_pool_grew; }
  // Instances of the last wave whose trap the device counted: every trap
  // code raised, the pool's, the stack's and the memory records' included
  // (not those of calls the host served). Without any, no trap column
  // needs a scan.
  uint64_t wave_trapped() const { return x_.wave_trapped; }
  double kernel_ms() const { return c_.kernel_ms; }
  // The intrinsics' buffers (a canvas among them) back to the host: what
  // the batch's outputs wait for after its last wave. release() follows.
  Status finish_outputs();
  // What release() needs of the thread that ran the loop: its default
  // stream is per thread, so no other thread can wait for it. After this
  // the rest of release() may run on any thread that selects the loop's
  // GPU (run_batch hands it to the background releaser).
  Status settle_thread();
  // The wave block to the GPU's idle block, the staging to the next
  // batch, once every copy and kernel of this loop has ended (run_batch's
  // end, a failed batch). Streams the batch left idle are only asked.
  Status release();
  void report_phases(RunResult& out) const;

  // A resident batch (resident_batch.cu, BatchRequest::resident): its
  // one wave of n instances starts from the image once; then every call
  // runs the request's current export, chain and memory inputs and
  // outputs on the instances as the call before left them. An instance
  // that trapped keeps its trap (the kernels skip it).
  Status begin_resident(uint32_t n);
  Status resident_call(RunResult& out);
  // `len` bytes at `addr` of every instance (zeros for one that trapped),
  // or `record` bytes of `data` per instance written there; a range past
  // any instance's memory is an error.
  Status read_memory(uint64_t addr, uint64_t len, uint8_t* out);
  Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data);

 private:
  // A wave in one launch: its set-up and inputs, and its outputs after.
  Status init_wave(uint32_t first, uint32_t n, uint32_t blocks);
  Status download_wave(uint32_t first, uint32_t n, uint32_t blocks, RunResult& out);
  // A wave in slices (wave_slices.cu): how many (1: the wave runs in one
  // launch), and the wave run so.
  uint32_t slice_count(uint32_t n) const;
  Status run_slices(uint32_t first, uint32_t n, uint32_t slices);
  Status launch_slice(uint32_t k, uint32_t r0, uint32_t r1);
  bool outputs_follow_kernels(uint32_t first, uint32_t n) const;
  [[nodiscard]] Status queue_outputs(uint32_t k, bool last, uint32_t first, uint32_t r0, uint32_t r1);
  [[nodiscard]] Status add_slice_times(uint32_t slices, bool queued_outputs);
  [[nodiscard]] Status trace_slice_timeline(uint32_t slices) const;
  // The host's result arrays when the caller gave none.
  void own_results(RunResult& out, uint32_t n);
  // Instance 0's final state back into the source instance (the spec runner).
  Status write_back_first(uint32_t n);

  // Declared in this order: each part refers to those before it.
  WaveContext c_;
  WaveBuffers b_;
  WaveTransfers x_;
  WaveLaunches l_;
  uint64_t waves_done_ = 0;  // instances of finished waves (not counting reruns)
  uint32_t wave_slices_ = 1;
  bool released_ = false;  // release() ran
  bool settled_ = false;   // settle_thread() ran (on the loop's thread)
};

}  // namespace ww::gpu
