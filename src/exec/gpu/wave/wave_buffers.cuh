// A wave loop's device memory: the module and the intrinsics on the
// device, one block cut into the wave's columns (DevWave), the sparse
// pool, whose size each wave's use corrects for the next, the stack
// segments' pool, the memory inputs' and outputs' buffers, and the
// set-up each wave's instances get before their kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/gpu/device/wave_words.h"
#include "exec/gpu/host_calls/host_call_pass.h"
#include "exec/gpu/resources/device_arena.cuh"
#include "exec/gpu/wave/stack_pool.h"
#include "exec/gpu/wave/wave_context.cuh"

namespace ww::gpu {

class WaveBuffers {
 public:
  explicit WaveBuffers(WaveContext& c) : c_(c) {}

  // The block's bytes: the wave's columns as the plan counted them per
  // instance, the sparse layout's first pool, scratch for 32-bit results.
  uint64_t wave_block_bytes() const;
  // Every column of a wave of plan.wave_size instances, cut from the
  // arena, and `host_calls`' records when instances may leave for the host.
  Status alloc_wave_buffers(HostCallPass* host_calls);
  // Buffers for `rows` instances' memory inputs and outputs.
  Status alloc_memory_io(DeviceArena& from, uint64_t rows);
  // The call's export, fuel, deadline (from `now_ns`, the device's clock),
  // shared arguments and chain, their buffers from `from`.
  Status prepare_call(DeviceArena& from, uint64_t now_ns);
  Status upload_chain(DeviceArena& from);
  Result<uint64_t> device_now_ns();
  // A wave's set-up on the device, one kernel for every path: W where
  // kernels read it, the counts and the stack pool's, the instances'
  // state and their memory when asked (`fresh`), the progress count
  // (`done`). Queued on the thread's stream.
  struct Fresh {
    bool instances, memory, done;
  };
  Status begin_wave(uint32_t n, Fresh fresh);
  // The dense layouts: every instance's memory back to the image before a
  // wave, the whole buffer the first time, then only the pages the
  // previous wave wrote (the sparse layout's is begin_wave's chunk table).
  Status restore_dense_memory();
  // The memory input kernels and output kernels for the instances `w` and
  // `blocks` cover.
  Status apply_memory_inputs(const DevWave& w, uint32_t blocks, cudaStream_t stream);
  Status launch_mem_out(const DevWave& w, uint32_t blocks, cudaStream_t stream);
  // Fails unless [addr, addr + len) lies in every instance's memory.
  Status check_range(uint64_t addr, uint64_t len, const char* what);
  // Sparse: reads how much of the pool the wave took (`down`, its words
  // on the host), sizes the next wave and finds the instances that ran out
  // (`*redo` of them, from the first; `wave_trapped`: the wave's trap count).
  Status account_pool(uint32_t first, uint32_t n, const WaveWords& down, uint64_t wave_trapped, uint32_t* redo);
  // A new pool of `bytes` in place of the old one (its contents never
  // outlive a wave).
  Status set_pool(uint64_t bytes);
  uint64_t chunk_table_entries() const { return uint64_t(W.table_stride ? groups : 1) * W.cap_chunks; }
  // The size of the next wave: the plan's, or for sparse memory what the
  // pool holds at the last wave's use per group, within the stack pool's cap.
  uint32_t next_wave_size() const { return stack_wave_cap ? std::min(next_wave, stack_wave_cap) : next_wave; }

  DeviceArena arena;
  ModuleOnDevice mod;
  DevIntrinsics I{};
  DevWave W{};
  std::vector<uint8_t*> mem_in, mem_out;                // per memory input and output
  WaveWords* wave_words = nullptr;                      // the counters DevWave and DevIntrinsics point into
  uint32_t* packed32 = nullptr;                         // DevWave::packed32 when a wave streams 32-bit results
  unsigned int* stream_done = nullptr;                  // DevWave::stream_done when a wave streams
  uint32_t* results32_scratch[2] = {nullptr, nullptr};  // a staging piece each
  DevWave* wave_on_device = nullptr;                    // W's copy (DevWave::self)
  uint64_t* timer = nullptr;                            // read_timer's answer
  uint32_t groups = 0;                                  // groups of 32 instances the buffers hold
  bool memory_ready = false;                            // the memory buffer holds the image, but for dirty pages
  uint32_t next_wave = 0;
  uint64_t pool_chunks = 0;
  uint64_t pool_bytes_used = 0;  // the most a wave took, and that wave's instances
  uint32_t pool_wave_instances = 0;
  StackPool stack_pool;
  bool stack_pool_grew = false;  // the last wave's rerun is owed even to a lone instance
  uint32_t stack_wave_cap = 0;
  std::vector<uint32_t> canvas_before;  // several GPUs: the canvas this one uploaded
  bool canvas_mapped = false;           // the kernels draw straight on the host's canvas

 private:
  WaveContext& c_;
};

}  // namespace ww::gpu
