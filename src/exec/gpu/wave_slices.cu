// A wave whose inputs per instance and outputs are large runs in slices of
// whole blocks: slice k's kernels (its instances' set-up and memory
// inputs, the code, its memory outputs) run on the staging's compute
// stream while the thread's stream uploads slice k + 1 and downloads slice
// k - 1. In one piece, SHA-256's 1M 64-byte messages took 1.7 ms of
// upload, then 3.1 ms of kernels, then 1.9 ms of download (bench/RESULTS.md);
// the host's copies bound the batch, so the kernels hide behind them.
#include "exec/gpu/wave_loop.cuh"

#include <cstdlib>

namespace ww::gpu {
namespace {

// Bytes a slice moves at least: smaller slices cost launches and tails
// without moving enough to overlap.
constexpr uint64_t kSliceBytes = uint64_t(8) << 20;

// WW_WAVE_SLICES=K caps the slices of a wave (1: none), for measuring.
uint32_t slice_cap() {
  static const uint32_t cap = [] {
    const char* v = std::getenv("WW_WAVE_SLICES");
    const long k = v ? std::strtol(v, nullptr, 10) : 0;
    return k >= 1 ? uint32_t(std::min<long>(k, PinnedStaging::WaveSignals::kMaxSlices))
                  : PinnedStaging::WaveSignals::kMaxSlices;
  }();
  return cap;
}

}  // namespace

uint32_t WaveLoop::slice_count(uint32_t n) const {
  // These need the whole wave between launches, or columns the slices do
  // not cut: host calls, a resident batch, a chain launched call by call,
  // the spec runner's write-back, columns on the device.
  if (host_calls_ || req_.resident || req_.write_back || !req_.device_args.empty() ||
      !req_.device_results.empty() || (!req_.then.empty() && req_.launch_per_call))
    return 1;
  // Without inputs per instance there is no upload to hide: a slice's
  // download then overlaps only the next slice's kernel, and every slice's
  // first piece crosses alone. Mandelbrot's results (kernel 0.29 ms) came
  // down in 1.83 ms in 3 slices against 1.52 ms whole (bench/RESULTS.md).
  if (req_.mem_in.empty() && !args_per_row()) return 1;
  uint64_t per_instance = 0;
  for (const MemIn& mi : req_.mem_in) per_instance += mi.record_size;
  for (const MemOut& mo : req_.mem_out) per_instance += mo.length;
  if (args_per_row()) per_instance += uint64_t(nparams_) * 8;
  if (nres_) per_instance += results32_ ? 4 * uint64_t(nres_) : 8 * uint64_t(nres_) * w_;
  const uint64_t blocks = (n + kBlock - 1) / kBlock;
  const uint64_t slices = std::min<uint64_t>({per_instance * n / kSliceBytes, slice_cap(), blocks});
  return uint32_t(std::max<uint64_t>(slices, 1));
}

Status WaveLoop::run_slices(uint32_t first, uint32_t n, uint32_t slices) {
  const PinnedStaging::WaveSignals& sg = *sig_;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  const uint32_t step = (blocks + slices - 1) / slices * kBlock;  // rows a slice, whole blocks
  slices = (n + step - 1) / step;
  wave_slices_ = std::max(wave_slices_, slices);
  auto run = [&]() -> Status {
    // The wave's set-up on the thread's stream: each slice's kernels wait
    // for the inputs queued after it there (launch_slice).
    if (!req_.then.empty()) {
      W_.pos_begin = 0;
      W_.pos_end = W_.pos_total;
    }
    WW_TRY(prepare_arg_rows(n));
    WW_CUDA(cudaMemcpy(wave_on_device_, &W_, sizeof W_, cudaMemcpyHostToDevice));
    WW_CUDA(cudaMemsetAsync(W_.trapped, 0, 2 * sizeof(unsigned long long)));
    WW_TRY(stack_pool_.begin_wave(W_, n));
    if (W_.mem_cap) WW_TRY(reset_memory());
    WW_TRY(end_phase(memory_setup_ms_));
    trace_("wave: set-up for slices");
    using Signals = PinnedStaging::WaveSignals;
    bool stop_sent = false;
    for (uint32_t k = 0; k <= slices; ++k) {
      if (k < slices) {
        // Queued, not awaited: the slice's kernels wait for its inputs on the device.
        const uint32_t r0 = k * step, r1 = std::min(n, r0 + step);
        WW_TRY(upload_args(first, n, r0, r1));
        WW_TRY(upload_mem_in(first, r0, r1));
        lap(upload_ms_);
        WW_TRY(launch_slice(k, r0, r1));
        if (k == 0) prefill_finished();
        trace_("slice: inputs queued");
      }
      if (k > 0) {
        const uint32_t r0 = (k - 1) * step, r1 = std::min(n, r0 + step);
        WW_TRY(await_event(sg.slice[k - 1][Signals::kDone], stop_sent));
        trace_("slice: wait for its kernels");
        // The wait was the kernels', which their events time.
        phase_t_ = Clock::now();
        // On a stream of their own: on the thread's they waited for the
        // next slice's inputs, queued there just before. The host has each
        // piece when fetch_outputs returns, so nothing is left to wait for.
        WW_TRY(fetch_outputs(first, n, r0, r1, sg.outputs));
        lap(download_ms_);
        trace_("slice: outputs down");
      }
      WW_TRY(send_stop_if_cancelled(stop_sent));
    }
    trace_("wave: slices");
    for (uint32_t k = 0; k < slices; ++k) {
      const cudaEvent_t* ev = sg.slice[k];
      float set_up = 0, kernel = 0, outputs = 0;
      WW_CUDA(cudaEventElapsedTime(&set_up, ev[Signals::kSetUp], ev[Signals::kKernel]));
      WW_CUDA(cudaEventElapsedTime(&kernel, ev[Signals::kKernel], ev[Signals::kOutputs]));
      WW_CUDA(cudaEventElapsedTime(&outputs, ev[Signals::kOutputs], ev[Signals::kDone]));
      memory_setup_ms_ += set_up;
      kernel_ms_ += kernel;
      download_ms_ += outputs;
    }
    return download_status(first, n);
  };
  Status st = run();
  // Nothing of the wave may still run when its buffers go.
  if (!st.ok()) {
    (void)cudaStreamSynchronize(sg.compute);
    (void)cudaStreamSynchronize(sg.outputs);
  }
  return st;
}

}  // namespace ww::gpu
