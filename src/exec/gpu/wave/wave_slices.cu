// A wave whose inputs per instance and outputs are large runs in slices of
// whole blocks, all queued at once: each slice's kernels (its instances'
// set-up and memory inputs, the code, its memory outputs) wait on the
// device for its inputs, which the thread's stream uploads one slice after
// another, and run on two compute streams in turn; its outputs come down
// behind them. In one piece, SHA-256's 1M 64-byte messages would cross up,
// run their kernels and come down one step after the other; in slices the
// kernels hide behind the 64 MB crossing (bench/gpu/run.sh's sha256 row).
#include "exec/gpu/wave/wave_kernels.h"
#include "exec/gpu/wave/wave_loop.cuh"

#include <algorithm>
#include <utility>
#include <vector>

namespace ww::gpu {
namespace {

// Bytes a slice moves at least: smaller slices cost launches and tails
// without moving enough to overlap.
constexpr uint64_t kSliceBytes = uint64_t(8) << 20;

}  // namespace

// The device's side of a sliced wave, which the host's steps cannot show:
// when each slice's inputs had landed and its kernels began and ended,
// from the first slice's inputs.
Status WaveLoop::trace_slice_timeline(uint32_t slices) const {
  using Signals = PinnedStaging::WaveSignals;
  const cudaEvent_t zero = x_.sig->slice[0][Signals::kInputs];
  for (uint32_t k = 0; k < slices; ++k) {
    const cudaEvent_t* ev = x_.sig->slice[k];
    float t[4] = {};
    const Signals::SliceEvent order[4] = {Signals::kInputs, Signals::kKernel, Signals::kOutputs, Signals::kDone};
    for (int i = 0; i < 4; ++i) WW_CUDA(cudaEventElapsedTime(&t[i], zero, ev[order[i]]));
    std::fprintf(stderr, "[trace gpu slice %u] inputs in %.3f, kernel %.3f-%.3f, outputs gathered %.3f ms\n", k, t[0],
                 t[1], t[2], t[3]);
  }
  return Status::Ok();
}

// A slice's outputs can follow its kernels without the host when they are
// memory outputs only, each going straight into registered memory: the host
// then waits once, for the last slice's. Otherwise it brings each slice's
// outputs down through the staging as the slice ends.
bool WaveLoop::outputs_follow_kernels(uint32_t first, uint32_t n) const {
  if (c_.nres || c_.req.mem_out.empty()) return false;
  for (const MemOut& mo : c_.req.mem_out)
    if (!host_range_pinned(mo.data + uint64_t(first) * mo.length, uint64_t(n) * mo.length)) return false;
  return true;
}

Status WaveLoop::queue_outputs(uint32_t k, bool last, uint32_t first, uint32_t r0, uint32_t r1) {
  using Signals = PinnedStaging::WaveSignals;
  const PinnedStaging::WaveSignals& sg = *x_.sig;
  WW_CUDA(cudaStreamWaitEvent(sg.outputs, sg.slice[k][Signals::kDone], 0));
  for (size_t j = 0; j < c_.req.mem_out.size(); ++j) {
    const MemOut& mo = c_.req.mem_out[j];
    WW_CUDA(cudaMemcpyAsync(mo.data + (uint64_t(first) + r0) * mo.length, b_.mem_out[j] + uint64_t(r0) * mo.length,
                            uint64_t(r1 - r0) * mo.length, cudaMemcpyDeviceToHost, sg.outputs));
  }
  // Behind the last slice's outputs, every slice's kernels have ended: the
  // counts come with them, not by a round trip of their own.
  if (last)
    WW_CUDA(cudaMemcpyAsync(sg.wave_words->counts, b_.W.trapped, sizeof sg.wave_words->counts, cudaMemcpyDeviceToHost,
                            sg.outputs));
  WW_CUDA(cudaEventRecord(sg.slice[k][Signals::kFetched], sg.outputs));
  return Status::Ok();
}

namespace {

// Milliseconds inside at least one of the intervals: the slices' kernels
// run two at a time, and a phase counts each moment once.
float covered_ms(std::vector<std::pair<float, float>> spans) {
  std::sort(spans.begin(), spans.end());
  float total = 0, end = -1e30f;
  for (auto [a, b] : spans) {
    a = std::max(a, end);
    if (b > a) total += b - a;
    end = std::max(end, b);
  }
  return total;
}

}  // namespace

// The phases from the slices' events. The queued copies down each began when
// their slice's outputs were gathered or the copy before ended.
Status WaveLoop::add_slice_times(uint32_t slices, bool queued_outputs) {
  using Signals = PinnedStaging::WaveSignals;
  const cudaEvent_t zero = x_.sig->slice[0][Signals::kInputs];
  std::vector<std::pair<float, float>> set_up, kernel, outputs;
  float fetched_before = 0;
  for (uint32_t k = 0; k < slices; ++k) {
    float t[Signals::kSliceEvents] = {};
    for (int e = 0; e < Signals::kSliceEvents; ++e)
      if (e != Signals::kFetched || queued_outputs) WW_CUDA(cudaEventElapsedTime(&t[e], zero, x_.sig->slice[k][e]));
    set_up.emplace_back(t[Signals::kSetUp], t[Signals::kKernel]);
    kernel.emplace_back(t[Signals::kKernel], t[Signals::kOutputs]);
    outputs.emplace_back(t[Signals::kOutputs], t[Signals::kDone]);
    if (queued_outputs) {
      outputs.emplace_back(std::max(t[Signals::kDone], fetched_before), t[Signals::kFetched]);
      fetched_before = t[Signals::kFetched];
    }
  }
  c_.memory_setup_ms += covered_ms(set_up);
  c_.kernel_ms += covered_ms(kernel);
  c_.download_ms += covered_ms(outputs);
  return Status::Ok();
}

uint32_t WaveLoop::slice_count(uint32_t n) const {
  // These need the whole wave between launches, or columns the slices do
  // not cut: host calls, a resident batch, a chain launched call by call,
  // the spec runner's write-back, columns on the device.
  if (l_.host_calls || c_.req.resident || c_.req.write_back || !c_.req.device_args.empty() ||
      !c_.req.device_results.empty() || (!c_.req.then.empty() && c_.req.launch_per_call))
    return 1;
  // Without inputs per instance there is no upload to hide: a slice's
  // download then overlaps only the next slice's kernel, and every slice's
  // first piece crosses alone: Mandelbrot's results, behind a short kernel,
  // come down more slowly in slices than whole (bench/gpu/run.sh's mandel
  // row).
  if (c_.req.mem_in.empty() && !c_.args_per_row()) return 1;
  uint64_t per_instance = 0;
  for (const MemIn& mi : c_.req.mem_in) per_instance += mi.record_size;
  for (const MemOut& mo : c_.req.mem_out) per_instance += mo.length;
  if (c_.args_per_row()) per_instance += uint64_t(c_.nparams) * 8;
  if (c_.nres) per_instance += c_.results32 ? 4 * uint64_t(c_.nres) : 8 * uint64_t(c_.nres) * c_.slot_width;
  const uint64_t blocks = (n + kBlock - 1) / kBlock;
  const uint32_t cap = c_.req.tuning.wave_slices;
  const uint64_t slices = std::min<uint64_t>({per_instance * n / kSliceBytes, cap, blocks});
  return uint32_t(std::max<uint64_t>(slices, 1));
}

// A slice's kernels on the compute stream (wave_slices.cu runs the
// slices): here, since wave_kernels.cuh's kernels are defined in one file.
Status WaveLoop::launch_slice(uint32_t k, uint32_t r0, uint32_t r1) {
  WW_TRY(x_.drop_queued_canvas());
  using Signals = PinnedStaging::WaveSignals;
  const cudaEvent_t* ev = x_.sig->slice[k];
  const cudaStream_t s = x_.sig->compute[k % PinnedStaging::WaveSignals::kComputeStreams];
  DevWave w = b_.W;
  w.t_base = r0;
  const uint32_t blocks = (r1 - r0 + kBlock - 1) / kBlock;
  WW_CUDA(cudaEventRecord(ev[Signals::kInputs], cudaStreamPerThread));
  WW_CUDA(cudaStreamWaitEvent(s, ev[Signals::kInputs], 0));
  WW_CUDA(cudaEventRecord(ev[Signals::kSetUp], s));
  WW_CUDA(wave_kernels::init_state(blocks, s, b_.mod.M, w, b_.mod.init));
  WW_TRY(b_.apply_memory_inputs(w, blocks, s));
  WW_CUDA(cudaEventRecord(ev[Signals::kKernel], s));
  WW_TRY(c_.launcher.launch(b_.mod.M, w, b_.I, blocks, c_.layout, s));
  WW_CUDA(cudaEventRecord(ev[Signals::kOutputs], s));
  WW_TRY(b_.launch_mem_out(w, blocks, s));
  WW_CUDA(cudaEventRecord(ev[Signals::kDone], s));
  return Status::Ok();
}

Status WaveLoop::run_slices(uint32_t first, uint32_t n, uint32_t slices) {
  const PinnedStaging::WaveSignals& sg = *x_.sig;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  const uint32_t step = (blocks + slices - 1) / slices * kBlock;  // rows a slice, whole blocks
  slices = (n + step - 1) / step;
  wave_slices_ = std::max(wave_slices_, slices);
  auto run = [&]() -> Status {
    // The wave's set-up on the thread's stream: each slice's kernels wait
    // for the inputs queued after it there (launch_slice).
    if (!c_.req.then.empty()) {
      b_.W.pos_begin = 0;
      b_.W.pos_end = b_.W.pos_total;
    }
    WW_TRY(x_.prepare_arg_rows(n));
    // Each slice sets up its instances on its own stream (launch_slice).
    x_.words_queued = false;  // the launch queues its own
    WW_TRY(b_.begin_wave(n, {false, true, false}));
    WW_TRY(c_.end_phase(c_.memory_setup_ms));
    c_.trace("wave: set-up for slices");
    using Signals = PinnedStaging::WaveSignals;
    const bool queued_outputs = outputs_follow_kernels(first, n);
    bool stop_sent = false;
    // Every slice queued before any is awaited: waiting for slice k - 1 and
    // bringing its outputs down before queueing slice k + 1's inputs would
    // leave the GPU idle between slices. The slices' kernels wait for their
    // inputs on the device.
    for (uint32_t k = 0; k < slices; ++k) {
      const uint32_t r0 = k * step, r1 = std::min(n, r0 + step);
      WW_TRY(x_.upload_args(first, n, r0, r1));
      WW_TRY(x_.upload_mem_in(first, r0, r1));
      c_.lap(c_.upload_ms);
      WW_TRY(launch_slice(k, r0, r1));
      if (queued_outputs) WW_TRY(queue_outputs(k, k + 1 == slices, first, r0, r1));
      c_.trace("slice: queued");
      WW_TRY(l_.send_stop_if_cancelled(stop_sent));
    }
    // The flags are filled while the slices run.
    x_.prefill_finished();
    c_.trace("slices: finished flags");
    if (queued_outputs) {
      WW_TRY(l_.await_event(sg.slice[slices - 1][Signals::kFetched], stop_sent));
      c_.phase_t = Clock::now();
      c_.trace("slices: outputs down");
    } else {
      for (uint32_t k = 0; k < slices; ++k) {
        const uint32_t r0 = k * step, r1 = std::min(n, r0 + step);
        WW_TRY(l_.await_event(sg.slice[k][Signals::kDone], stop_sent));
        c_.trace("slice: wait for its kernels");
        // The wait was the kernels', which their events time.
        c_.phase_t = Clock::now();
        // The host has each piece when fetch_outputs returns.
        WW_TRY(x_.fetch_outputs(first, n, r0, r1, sg.outputs));
        c_.lap(c_.download_ms);
        c_.trace("slice: outputs down");
      }
    }
    c_.trace("wave: slices");
    WW_TRY(add_slice_times(slices, queued_outputs));
    if (StepTrace::enabled()) WW_TRY(trace_slice_timeline(slices));
    return x_.download_status(first, n, queued_outputs ? sg.wave_words->counts : nullptr);
  };
  Status st = run();
  // Nothing of the wave may still run when its buffers go.
  if (!st.ok()) {
    for (cudaStream_t c : sg.compute) (void)cudaStreamSynchronize(c);
    (void)cudaStreamSynchronize(sg.outputs);
  }
  return st;
}

}  // namespace ww::gpu
