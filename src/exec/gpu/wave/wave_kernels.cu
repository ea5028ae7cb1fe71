// The wave loop's kernels, defined here once (device/wave_kernels.cuh),
// the host calls that launch them (wave_kernels.h), and the start-up's
// loading of every kernel a batch launches.
#include "exec/gpu/wave/wave_kernels.h"

#include "exec/gpu/device/wave_kernels.cuh"
#include "exec/gpu/driver/kernel_launcher.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

// Calls f with the layout as a compile-time constant (decltype(L)::value),
// for launching the kernels templated on it.
template <class F>
void with_layout(DevLayout l, F&& f) {
  switch (l) {
    case DevLayout::Interleaved: f(std::integral_constant<DevLayout, DevLayout::Interleaved>{}); break;
    case DevLayout::Contiguous: f(std::integral_constant<DevLayout, DevLayout::Contiguous>{}); break;
    case DevLayout::Sparse: f(std::integral_constant<DevLayout, DevLayout::Sparse>{}); break;
  }
}

uint32_t blocks_for(uint32_t n) { return (n + kBlock - 1) / kBlock; }

}  // namespace

void load_kernels(bool interpreter) {
  // Asking for a kernel's attributes loads it; what fails here fails again,
  // checked, where a batch launches it.
  cudaFuncAttributes a;
  (void)cudaFuncGetAttributes(&a, read_timer_kernel);
  (void)cudaFuncGetAttributes(&a, init_state_kernel);
  (void)cudaFuncGetAttributes(&a, begin_wave_kernel);
  (void)cudaFuncGetAttributes(&a, pack_results32_kernel);
  for (DevLayout l : {DevLayout::Interleaved, DevLayout::Contiguous, DevLayout::Sparse})
    with_layout(l, [&](auto L) {
      (void)cudaFuncGetAttributes(&a, mem_in_kernel<decltype(L)::value>);
      (void)cudaFuncGetAttributes(&a, mem_out_kernel<decltype(L)::value>);
    });
  // A first launch in a process costs more than later ones even when the
  // kernel is loaded: paid here for the set-up kernel every wave launches.
  begin_wave_kernel<<<1, kBlock>>>(DevModule{}, DevWave{}, InitState{}, WaveStart{});
  (void)cudaStreamSynchronize(cudaStreamPerThread);
  (void)cudaGetLastError();
  if (interpreter) load_interpreter_kernels();
}

namespace wave_kernels {

cudaError_t read_timer(uint64_t* out) {
  read_timer_kernel<<<1, 1>>>(out);
  return cudaGetLastError();
}

cudaError_t copy_image(DevLayout l, dim3 grid, const DevWave& W, uint32_t groups, const uint32_t* image,
                       uint32_t image_words) {
  // The dense layouts only: sparse memory reads the image where unwritten.
  if (l == DevLayout::Interleaved)
    copy_image_kernel<DevLayout::Interleaved><<<grid, 256>>>(W, groups, image, image_words);
  else if (l == DevLayout::Contiguous)
    copy_image_kernel<DevLayout::Contiguous><<<grid, 256>>>(W, groups, image, image_words);
  return cudaGetLastError();
}

cudaError_t restore_dirty_pages(DevLayout l, uint32_t blocks, const DevWave& W, const uint32_t* image,
                                uint32_t image_words) {
  if (l == DevLayout::Interleaved)
    restore_dirty_pages_kernel<DevLayout::Interleaved><<<blocks, 256>>>(W, image, image_words);
  else if (l == DevLayout::Contiguous)
    restore_dirty_pages_kernel<DevLayout::Contiguous><<<blocks, 256>>>(W, image, image_words);
  return cudaGetLastError();
}

cudaError_t init_state(uint32_t blocks, cudaStream_t stream, const DevModule& M, const DevWave& W, const InitState& S) {
  init_state_kernel<<<blocks, kBlock, 0, stream>>>(M, W, S);
  return cudaGetLastError();
}

cudaError_t begin_wave(uint32_t blocks, const DevModule& M, const DevWave& W, const InitState& S, const WaveStart& B) {
  begin_wave_kernel<<<blocks, kBlock>>>(M, W, S, B);
  return cudaGetLastError();
}

cudaError_t mem_in(DevLayout l, uint32_t blocks, cudaStream_t stream, const DevWave& W, const uint8_t* records,
                   uint32_t record_size, uint32_t address) {
  with_layout(l, [&](auto L) {
    mem_in_kernel<decltype(L)::value><<<blocks, kBlock, 0, stream>>>(W, records, record_size, address);
  });
  return cudaGetLastError();
}

cudaError_t mem_out(DevLayout l, uint32_t blocks, cudaStream_t stream, const DevWave& W, uint8_t* out, uint32_t length,
                    uint32_t address) {
  with_layout(
      l, [&](auto L) { mem_out_kernel<decltype(L)::value><<<blocks, kBlock, 0, stream>>>(W, out, length, address); });
  return cudaGetLastError();
}

cudaError_t fill_words(uint64_t* dst, uint64_t value, uint32_t n) {
  fill_words_kernel<<<blocks_for(n), kBlock>>>(dst, value, n);
  return cudaGetLastError();
}

cudaError_t column_in(const uint8_t* src, uint32_t width, uint32_t n, uint64_t* dst) {
  column_in_kernel<<<blocks_for(n), kBlock>>>(src, width, n, dst);
  return cudaGetLastError();
}

cudaError_t column_out(const uint64_t* src, const uint8_t* trap, uint32_t width, uint32_t n, uint8_t* dst) {
  column_out_kernel<<<blocks_for(n), kBlock>>>(src, trap, width, n, dst);
  return cudaGetLastError();
}

cudaError_t pack_results32(cudaStream_t stream, const uint64_t* io, uint32_t n, uint32_t off, uint32_t m, uint32_t nres,
                           uint32_t* out) {
  pack_results32_kernel<<<blocks_for(m), kBlock, 0, stream>>>(io, n, off, m, nres, out);
  return cudaGetLastError();
}

cudaError_t gather_memory(DevLayout l, const DevWave& W, uint8_t* out, uint64_t bytes) {
  with_layout(l, [&](auto L) { gather_memory_kernel<decltype(L)::value><<<1024, 256>>>(W, out, bytes); });
  return cudaGetLastError();
}

}  // namespace wave_kernels
}  // namespace ww::gpu
