// Sizing a GPU batch: linear-memory capacity per instance, the bytes each
// instance needs beyond it, and how many instances fit in one wave. Plain
// C++ so it is unit-tested without a GPU.
#pragma once

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"

namespace ww::gpu {

// Growth room given to modules that use memory.grow when the request does
// not set memory_pages: enough for a C program's heap to grow a little.
inline constexpr uint32_t kDefaultGrowPages = 16;
// Linear memory a batch whose calls the host serves (WASI programs) may
// reserve in all for its instances' growth (memory_pages_for): up to 32
// instances get 64 MiB each (up to their memory's maximum). Zeroed once
// on the GPU when the batch starts (2 GiB at memset speed), a small part
// of a data-centre GPU's memory, and under kWaveMemoryBytes, so the
// layout stays dense.
inline constexpr uint64_t kHostCallMemoryBytes = 2ull << 30;
// Device memory left untouched for the runtime, the module and the image.
inline constexpr uint64_t kReserveBytes = 512ull << 20;
// A wave is kept below kWaveMemoryBytes when it can still hold
// kBusyWaveInstances (four times the threads an H200 keeps resident).
inline constexpr uint64_t kWaveMemoryBytes = 32ull << 30;
inline constexpr uint64_t kBusyWaveInstances = 1u << 20;

// The sparse layout's first wave is sized for this many chunk parts per
// instance when the pool cannot hold more; later waves follow what the
// last one used.
inline constexpr uint64_t kSparseChunksGuess = 4;
// The pool starts at kSparsePoolAllowanceBytes per instance of the first
// wave (at least kSparsePoolStart bytes) and grows fourfold when a wave
// runs out: freeing a pool costs time in proportion to its size
// (bench/scale/alloc_cost.cu), so one the size of the whole GPU would cost
// light modules more than their kernel.
// Where the GPU's idle block (allocated beside its start-up, kept between
// batches) holds more than the wave's buffers, the first pool takes the
// rest of it, which costs no allocation: SQLite's 10K instances, 205 KB
// written each, would otherwise all run again after a 1 GiB pool ran out,
// a far longer batch (bench/wasi/run-gpu.sh's SQLite rows). The first
// wave is still sized from the allowance. kIdleBlockMargin is left for
// what the plan does not count of the block (two staging pieces of result
// scratch, each buffer's rounding).
inline constexpr uint64_t kSparsePoolAllowanceBytes = 4096;
inline constexpr uint64_t kSparsePoolStart = 1ull << 30;
inline constexpr uint64_t kIdleBlockMargin = 16ull << 20;
// An instance's part of a chunk is 256 bytes, larger only where the group's
// chunk table would pass kSparseTableBytesPerInstance. A first write copies
// the whole part from the image: SHA-256's 1M instances set up memory
// faster, and run their kernel no slower, with 256-byte parts than with
// 1 KiB ones (bench/gpu/run.sh's sha256 row).
inline constexpr uint32_t kSparseMinChunkShift = 8;
inline constexpr uint64_t kSparseTableBytesPerInstance = 1024;

uint32_t memory_pages_for(const BatchRequest& req, const GpuImage& img);
// The device memory upload_intrinsics takes, as DeviceArena cuts it (from
// the wave's block).
uint64_t intrinsics_bytes(const GpuBatch* gb);

// The layout for MemoryLayout::Auto. Dense interleaved is the fastest
// to address and wins while the whole batch's memory fits one wave of at
// most kWaveMemoryBytes; beyond that, sparse memory holds more instances
// per wave and sets up only what they write. A module that adds to shared
// state (gpu.atomic_add) keeps dense memory, since sparse memory may run
// an instance twice when the pool runs out.
MemoryLayout choose_layout(const Module& m, uint64_t instances, uint32_t memory_pages, uint64_t free_bytes);
bool imports_atomic_add(const Module& m);
// Whether an instance whose memory.grow passes the pages reserved for it
// (BatchPlan::memory_pages) runs again with more, so that memory.grow
// fails only past the memory's maximum, as on the CPU. Not where running
// twice would show: a chain's or a resident batch's state carried from
// call to call, a write-back into the caller's store, shared state
// (gpu.atomic_add); there, and where the request turns it off, memory.grow
// fails past the reservation.
bool grows_past_reservation_rerun(const BatchRequest& req);
// log2 of the bytes of one instance's part of a sparse chunk.
uint32_t sparse_chunk_shift(uint64_t capacity_bytes);
// `frames`: the interpreter's frame slots and call records are counted.
// 64-bit words per instance for arguments in and results out: the
// export's parameters, the chain's last call's results, each value the
// module's slot width.
uint32_t io_slots(const BatchRequest& req);
// Whether every result is an i32 or an f32 (and there is one), in a module
// of one slot a value: such results cross as 4-byte words.
bool results_are_32bit(const std::vector<ValType>& results, uint32_t slot_width);
// The 32-bit words of an instance's results that a streamed wave packs on
// the device (wave_stream.cu): its results when all are i32 or f32 and
// nothing but the kernel writes them, else 0.
uint32_t packed_result_words(const BatchRequest& req);
uint64_t overhead_bytes_per_instance(const BatchRequest& req, const GpuImage& img, bool frames = true);
// Whether the batch may write sparse memory: a store or bulk-memory op, an
// import the host serves, a memory input, a resident batch's later calls.
bool memory_written(const BatchRequest& req, const GpuImage& img);

// "this batch needs N bytes per instance but only M bytes of GPU memory are
// free" when not even one wave of 32 instances fits.
// `reserved`: device bytes the launcher needs besides the waves;
// `host_call_bytes`: per instance, for calls that leave for the host;
// `idle_block`: the GPU's idle block (DeviceInfo::idle_block_bytes), whose
// room beyond the wave's buffers the first sparse pool takes.
Result<BatchPlan> plan_for(const BatchRequest& req, const GpuImage& img, uint64_t free_bytes, bool frames = true,
                           uint64_t reserved = 0, uint64_t host_call_bytes = 0, uint64_t idle_block = 0);

}  // namespace ww::gpu
