// What every part of a wave loop reads (WaveLoop: wave_loop.cuh): the
// request, its plan and image, the shape of the call it makes, where the
// rows go, the phases' clock and the trace. The parts own the rest: the
// device memory (wave_buffers.cuh), the host's transfers
// (wave_transfers.cuh), the launches and the waits for them
// (wave_launches.cuh).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/step_trace.h"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/driver/kernel_launcher.cuh"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/plan/gpu_plan.h"
#include "exec/gpu/plan/module_on_device.h"

namespace ww::gpu {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline void device_sync() { (void)cudaStreamSynchronize(cudaStreamPerThread); }

static_assert(int(DevLayout::Interleaved) == int(MemoryLayout::Interleaved) &&
              int(DevLayout::Contiguous) == int(MemoryLayout::Contiguous) &&
              int(DevLayout::Sparse) == int(MemoryLayout::Sparse));

// A row of values as slots (value k at k * w), `hi` giving v128s' high words.
template <typename T>
std::vector<T> as_slots(const std::vector<T>& values, const std::vector<T>& hi, uint32_t w) {
  if (w == 1) return values;
  std::vector<T> slots(values.size() * w, 0);
  for (size_t k = 0; k < values.size(); ++k) {
    slots[k * w] = values[k];
    if (k < hi.size()) slots[k * w + 1] = hi[k];
  }
  return slots;
}

template <class T>
inline Status download_column0(std::vector<T>& out, const T* dev, uint32_t rows, uint32_t n) {
  // Element k of instance 0 lives at dev[k * n]: one strided copy.
  out.resize(rows);
  if (rows) WW_CUDA(cudaMemcpy2D(out.data(), sizeof(T), dev, sizeof(T) * n, sizeof(T), rows, cudaMemcpyDeviceToHost));
  return Status::Ok();
}

struct WaveContext {
  WaveContext(const BatchRequest& request, KernelLauncher& kernel_launcher, StoreImpl& store, uint32_t inst,
              const GpuImage& image, const BatchPlan& batch_plan, Clock::time_point start)
      : req(request),
        launcher(kernel_launcher),
        S(store),
        instance(inst),
        img(image),
        plan(batch_plan),
        slot_width(image.slot_width),
        layout(DevLayout(batch_plan.layout)),
        sparse(batch_plan.layout == MemoryLayout::Sparse),
        serves_host_calls(uses_host_calls(request, image)),
        t_start(start) {
    bind_call();
  }

  const BatchRequest& req;
  KernelLauncher& launcher;
  StoreImpl& S;
  const uint32_t instance;
  const GpuImage& img;
  const BatchPlan& plan;

  // The call: the function whose results the batch returns, its values,
  // and how they cross (bind_call; a resident batch changes calls).
  const FuncType* ftype = nullptr;
  uint32_t nparams = 0, nres = 0;
  // Slots per value (GpuImage::slot_width): value k's rows in W.io are
  // k * slot_width .. k * slot_width + slot_width - 1.
  const uint32_t slot_width;
  bool v128_results = false;
  bool ref_results = false;
  bool results32 = false;  // every result i32 or f32, one slot each
  const DevLayout layout;
  const bool sparse;
  // Some import is served by the host: instances may leave their kernel.
  const bool serves_host_calls;
  // Where the rows go (the request's, or the run's own arrays).
  BatchRequest::Destination dest;

  // The phases' clock: each step adds the time since the last step ended
  // to its phase.
  Clock::time_point t_start;
  Clock::time_point phase_t = Clock::now();
  double upload_ms = 0, memory_setup_ms = 0, download_ms = 0, kernel_ms = 0;
  StepTrace trace{"gpu", device_sync};

  // The request's export, results and call fields.
  void bind_call();
  // Adds the time since the last phase ended to `acc_ms`, once the device
  // has caught up with what was queued.
  Status end_phase(double& acc_ms);
  // The same without waiting for the device (copies still under way count
  // to what comes next).
  void lap(double& acc_ms) {
    const auto now = Clock::now();
    acc_ms += std::chrono::duration<double, std::milli>(now - phase_t).count();
    phase_t = now;
  }
  // Whether arguments come per instance (uploaded) rather than shared.
  bool args_per_row() const;
  // Arguments per instance, memory inputs or device columns: a wave with
  // any waits for them to land.
  bool inputs_on_wire() const;
  // Whether every instance of a wave that finishes has its flag from the
  // wave's count alone (no chain, resident batch or host calls).
  bool finished_from_count() const;
  uint32_t host_call_width() const { return host_call_width_of(img); }
};

}  // namespace ww::gpu
