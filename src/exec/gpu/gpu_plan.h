// Sizing a GPU batch: linear-memory capacity per instance, the bytes each
// instance needs beyond it, and how many instances fit in one wave. Plain
// C++ so it is unit-tested without a GPU.
#pragma once

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/gpu_image.h"

namespace ww::gpu {

// Growth room given to modules that use memory.grow when the request does
// not set memory_pages: enough for a C program's heap to grow a little.
inline constexpr uint32_t kDefaultGrowPages = 16;
// Device memory left untouched for the runtime, the module and the image.
inline constexpr uint64_t kReserveBytes = 512ull << 20;
// A wave is kept below kWaveMemoryBytes when it can still hold
// kBusyWaveInstances (four times the threads an H200 keeps resident).
inline constexpr uint64_t kWaveMemoryBytes = 32ull << 30;
inline constexpr uint64_t kBusyWaveInstances = 1u << 20;

uint32_t memory_pages_for(const BatchRequest& req, const GpuImage& img);
// `frames`: the interpreter's frame slots and call records are counted.
uint64_t overhead_bytes_per_instance(const BatchRequest& req, const GpuImage& img, bool frames = true);

// "this batch needs N bytes per instance but only M bytes of GPU memory are
// free" when not even one wave of 32 instances fits.
// `reserved`: device bytes the launcher needs besides the waves.
Result<BatchPlan> plan_for(const BatchRequest& req, const GpuImage& img, uint64_t free_bytes,
                           bool frames = true, uint64_t reserved = 0);

}  // namespace ww::gpu
