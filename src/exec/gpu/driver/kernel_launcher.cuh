// The seam between the wave loop and the code that runs the instances: the
// loop plans, allocates, initialises and downloads every wave the same way
// and hands the launch to a KernelLauncher. The built-in interpreter kernel
// launches through the runtime API (interp_launcher.cu); NVRTC-compiled
// code through the driver API (compiled_launcher.cu).
#pragma once

#include <cuda_runtime.h>

#include "common/result.h"
#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"

namespace ww::gpu {

class KernelLauncher {
 public:
  virtual ~KernelLauncher() = default;
  // "interpreter" or "compiled", for summaries.
  virtual const char* tier_name() const = 0;
  // The interpreter needs frame slots and call records per instance in
  // device memory; compiled code keeps its frames in registers and on the
  // CUDA stack.
  virtual bool needs_frames() const = 0;
  // Takes the device memory the launcher needs beside the wave's buffers
  // for calls up to `max_call_depth` deep (the CUDA stack of recursive
  // compiled code) before the plan reads what is free: a stack an earlier
  // batch set is already missing from free memory, and counting it again
  // would leave later batches of the process no room.
  virtual Status hold_stack(uint32_t max_call_depth) { return Status::Ok(); }
  // Whether hold_stack may take device memory (each probe of free memory
  // after it is a visible cost in a small batch).
  virtual bool holds_stack() const { return false; }
  // Words of saved frames one instance may need to leave for the host
  // (compiled code unwinds its calls; the interpreter's frames stay where
  // they are): the wave loop sizes DevHostCalls::frames from it.
  virtual uint64_t leave_words() const { return 0; }
  // Enqueues one wave's kernel on `stream`: `blocks` blocks of kBlock
  // threads, one thread per instance.
  virtual Status launch(const DevModule& m, const DevWave& w, const DevIntrinsics& in, uint32_t blocks,
                        DevLayout layout, cudaStream_t stream) = 0;
};

// The built-in interpreter kernel.
KernelLauncher& interpreter_launcher();
// Loads its kernels (one per memory layout) and launches each once with
// no instances: otherwise a batch's first launch would pay for both.
void load_interpreter_kernels();

}  // namespace ww::gpu
