// The GPU's executors and what the batch engine hands the GPU besides
// instances to run: host memory to register for direct copies, and
// objects to release on the GPU's background releaser. The batch engine
// (src/batch) reaches the GPU only through this header, gpu_start_up.h and
// the Executor interface.
#pragma once

#include <cstdint>
#include <memory>

#include "batch/executor.h"
#include "compiled/compiled_tier.h"

namespace ww::batch {

// The GPU's interpreter kernel as an executor.
std::unique_ptr<Executor> make_gpu_interpreter();
// Compiled GPU code for `req` as an executor, built for and loaded first on
// GPU `device` (other GPUs load it at their first launch; -1: the calling
// thread's GPU).
Result<std::unique_ptr<Executor>> compile_gpu_executor(const compiled::Request& req, compiled::Outcome* outcome,
                                                       int device);
// `bytes` of host memory at `p` that the GPU copies straight to or from,
// registered by the GPU's start-up while it is still under way, which
// hides the registration: a handle that keeps it registered until it goes
// (before the memory does); null when the start-up is past that point (the
// staging then copies it).
std::shared_ptr<void> pin_for_gpu_at_start_up(const void* p, uint64_t bytes);
// Drops `object` (a GPU executor and the compiled code it holds) on the
// GPU's background releaser, after the device memory it frees: unloading
// code waits for those frees, and the caller has outputs to write.
void release_on_gpu(std::shared_ptr<void> object);

}  // namespace ww::batch
