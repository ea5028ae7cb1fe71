// The wave loop's kernels (device/wave_kernels.cuh) as host calls: each
// queues its kernel and returns the launch's error. They are defined with
// the kernels in one translation unit (wave_kernels.cu), so that the
// GPU's start-up loads them as one module (load_kernels) while the wave
// loop's parts call them from files of their own. A null stream is the
// calling thread's default stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/wave_words.h"

namespace ww::gpu {

namespace wave_kernels {

// The device's global timer (ns), into *out.
cudaError_t read_timer(uint64_t* out);
// The dense layouts' memory: the image into every instance of the zeroed
// buffer (`groups` groups of 32), or back into the pages a wave wrote.
cudaError_t copy_image(DevLayout l, dim3 grid, const DevWave& W, uint32_t groups, const uint32_t* image,
                       uint32_t image_words);
cudaError_t restore_dirty_pages(DevLayout l, uint32_t blocks, const DevWave& W, const uint32_t* image,
                                uint32_t image_words);
// Each instance's initial state (a slice's, on its stream); a whole
// wave's set-up in one launch.
cudaError_t init_state(uint32_t blocks, cudaStream_t stream, const DevModule& M, const DevWave& W, const InitState& S);
cudaError_t begin_wave(uint32_t blocks, const DevModule& M, const DevWave& W, const InitState& S, const WaveStart& B);
// Memory inputs and outputs, a record per instance.
cudaError_t mem_in(DevLayout l, uint32_t blocks, cudaStream_t stream, const DevWave& W, const uint8_t* records,
                   uint32_t record_size, uint32_t address);
cudaError_t mem_out(DevLayout l, uint32_t blocks, cudaStream_t stream, const DevWave& W, uint8_t* out, uint32_t length,
                    uint32_t address);
// n words of `value`; a column in GPU memory into the wave's slots and a
// result column out of them; 32-bit results packed column by column;
// instance 0's memory de-interleaved.
cudaError_t fill_words(uint64_t* dst, uint64_t value, uint32_t n);
cudaError_t column_in(const uint8_t* src, uint32_t width, uint32_t n, uint64_t* dst);
cudaError_t column_out(const uint64_t* src, const uint8_t* trap, uint32_t width, uint32_t n, uint8_t* dst);
cudaError_t pack_results32(cudaStream_t stream, const uint64_t* io, uint32_t n, uint32_t off, uint32_t m, uint32_t nres,
                           uint32_t* out);
cudaError_t gather_memory(DevLayout l, const DevWave& W, uint8_t* out, uint64_t bytes);

}  // namespace wave_kernels
}  // namespace ww::gpu
