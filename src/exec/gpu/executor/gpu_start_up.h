// What a batch does with the GPU before its first instance (batch.cc's
// run): wait for the stages of the start-up it needs, choose the backend
// and the memory layout, list the GPUs it runs on.
#pragma once

#include <chrono>

#include "batch/batch.h"
#include "batch/executor.h"
#include "common/step_trace.h"

namespace ww::batch {

// Waits, as it goes, for the GPU's warm-up: a batch waits only for the
// stages it needs, but the warm-up's NVRTC load must not outlive it (a
// load still under way at exit would crash the process).
struct AwaitWarmUp {
  AwaitWarmUp() = default;
  AwaitWarmUp(const AwaitWarmUp&) = delete;
  AwaitWarmUp& operator=(const AwaitWarmUp&) = delete;
  ~AwaitWarmUp() { wait_for_warm_up(); }
};

// Whether the GPU's context is still starting: what a batch does
// meanwhile costs it nothing, for it would have waited.
bool gpu_start_up_in_flight();

// What of [from, to] came after the GPU's start-up had made the GPU ready
// for batches: nothing while it is still under way, all of it when no
// start-up ran ahead of the batch.
double ms_after_gpu_ready(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to);

// The first GPU the batch will run on (before resolve_gpus lists them): the
// one the start-up made ready, where work ahead of the batch belongs.
int first_selected_gpu(const GpuOptions& o);

// The rest of the start-up, which a batch needs before its waves; what
// of the wait was for pinning this batch's buffers goes into its upload.
void await_gpu_ready(BatchResult& out, StepTrace& trace);

// The backend (the GPU when asked for, or for `auto` when one is usable)
// and, on the GPU, the memory layout.
[[nodiscard]] Status choose_backend(const BatchSpec& spec, Job& job, BatchResult& out, StepTrace& trace);

// The GPUs the batch runs on (Job::gpus), each with the memory it may
// plan with.
[[nodiscard]] Status resolve_gpus(const BatchSpec& spec, Job& job);

}  // namespace ww::batch
