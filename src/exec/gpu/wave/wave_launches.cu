// A wave's launches: a launch between its timing events, the wave's words
// behind it, the wait for a kernel (spinning, then napping, with the
// progress line and a stop sent on cancel), the calls of a chain, and the
// launches again after the host served the calls instances left for it.
#include "exec/gpu/wave/wave_loop.cuh"

#include <sys/prctl.h>

#include <algorithm>
#include <thread>

namespace ww::gpu {

Status WaveLoop::queue_launch(uint32_t blocks) {
  WW_TRY(drop_queued_canvas());
  WW_CUDA(cudaEventRecord(sig_->start));
  trace_("wave: start event");
  poll_waits_ = true;
  WW_TRY(launcher_.launch(mod_.M, W_, I_, blocks, layout_, nullptr));
  trace_("wave: kernel launched");
  WW_CUDA(cudaEventRecord(sig_->stop));
  trace_("wave: stop event");
  // The wave's words come down behind the kernel, and the host waits once
  // for both: fetched after the wait, they were a round trip of their own
  // (0.026 ms of thread-id's 0.26 ms compiled batch, bench/RESULTS.md).
  words_queued_ = words_follow_kernel();
  if (words_queued_) {
    WW_TRY(queue_wave_words(true));
    WW_CUDA(cudaEventRecord(sig_->words_down));
  }
  trace_("wave: launch");
  return Status::Ok();
}

Status WaveLoop::launch_and_wait(uint32_t blocks) {
  WW_TRY(queue_launch(blocks));
  prefill_finished();
  trace_("wave: finished flags filled");
  bool stop_sent = false;
  if (W_.stream_done) WW_TRY(stream_results(stop_sent));
  WW_TRY(await_event(words_queued_ ? sig_->words_down : sig_->stop, stop_sent));
  poll_waits_ = false;
  trace_("wave: kernel's end seen");
  float ms = 0;
  WW_CUDA(cudaEventElapsedTime(&ms, sig_->start, sig_->stop));
  kernel_ms_ += ms;
  // The host's wait beyond the kernel: the set-up queued before it
  // (init_wave), then a stretch still coming down when the kernel ended,
  // which is the download's; so the phases still add up to the wall time.
  const double host_ms = std::chrono::duration<double, std::milli>(Clock::now() - phase_t_).count();
  double late = std::max(0.0, host_ms - double(ms));
  if (setup_queued_) {
    float queued = 0;
    WW_CUDA(cudaEventElapsedTime(&queued, sig_->setup, sig_->start));
    const double setup_ms = std::min(late, double(queued));
    memory_setup_ms_ += setup_ms;
    late -= setup_ms;
    setup_queued_ = false;
  }
  if (W_.stream_done) download_ms_ += late;
  phase_t_ = Clock::now();
  trace_("wave: kernel's time");
  return Status::Ok();
}

Status WaveLoop::await_event(cudaEvent_t ev, bool& stop_sent) {
  const auto since = Clock::now();
  auto last_report = since;
  // Short batches (the spec runner's, thread-id's 0.1 ms kernel) finish in
  // microseconds: the first 0.2 ms the host spins, then naps from 20 us.
  // Each nap is a thirty-second of the wait so far, up to 1 ms, so the
  // wake-up after the kernel's end costs it about 3%: naps doubling to 1 ms
  // woke Monte Carlo's 4.2 ms kernel 0.7 ms after it ended
  // (bench/RESULTS.md).
  constexpr std::chrono::microseconds kSpin(200);
  while (cudaEventQuery(ev) == cudaErrorNotReady) {
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since);
    if (waited >= kSpin)
      nap(std::clamp<std::chrono::microseconds>(waited / 32, std::chrono::microseconds(20),
                                                std::chrono::milliseconds(1)));
    WW_TRY(send_stop_if_cancelled(stop_sent));
    WW_TRY(report_progress(last_report));
  }
  WW_CUDA(cudaEventSynchronize(ev));
  WW_CUDA(cudaGetLastError());
  return Status::Ok();
}

// Linux lets a sleep run past its end by the thread's timer slack, 50 us
// unless set: the host saw thread-id's 0.27 ms kernel end 0.41 ms after
// its launch (bench/RESULTS.md). The waiting thread's slack is 1 us.
void WaveLoop::nap(std::chrono::microseconds us) {
  thread_local const bool slack_set = prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) == 0;
  (void)slack_set;
  std::this_thread::sleep_for(us);
}

Status WaveLoop::report_progress(Clock::time_point& last_report) {
  if (!req_.progress || Clock::now() - last_report <= std::chrono::milliseconds(500)) return Status::Ok();
  last_report = Clock::now();
  WW_TRY(poll_after_start());
  WW_CUDA(cudaMemcpyAsync(sig_->words, W_.done, sizeof(unsigned long long), cudaMemcpyDeviceToHost, sig_->poll_stream));
  WW_CUDA(cudaStreamSynchronize(sig_->poll_stream));
  req_.progress(*sig_->words, req_.instances, seconds_since(t_start_));
  return Status::Ok();
}

Status WaveLoop::poll_after_start() {
  // The wave's set-up may still be queued before the kernel: a count read
  // before its reset, or a stop overwritten by the wave's own words, would
  // be wrong.
  if (!poll_waits_) return Status::Ok();
  poll_waits_ = false;
  WW_CUDA(cudaStreamWaitEvent(sig_->poll_stream, sig_->start, 0));
  return Status::Ok();
}

Status WaveLoop::send_stop_if_cancelled(bool& stop_sent) {
  if (stop_sent || !req_.cancel || !req_.cancel->load()) return Status::Ok();
  // Running instances stop within kDeadlineTickMask back-edges and stay
  // unfinished; the batch marks them interrupted.
  WW_TRY(poll_after_start());
  WW_CUDA(cudaMemcpyAsync(&wave_on_device_->deadline_ns, &sig_->words[1], sizeof(uint64_t), cudaMemcpyHostToDevice,
                          sig_->poll_stream));
  stop_sent = true;
  return Status::Ok();
}

Status WaveLoop::upload_chain(DeviceArena& arena) {
  W_.pos_begin = W_.pos_end = W_.pos_total = 0;
  if (req_.then.empty()) return Status::Ok();
  const uint32_t nimp = req_.module->module.num_imported_funcs;
  std::vector<DevThenCall> calls;
  std::vector<uint64_t> args;
  std::vector<uint8_t> kinds;
  uint64_t end = 1;  // position 0 is the export
  for (const BatchRequest::ThenCall& c : req_.then) {
    end += c.repeat;
    if (end > 0xffffffffu) return make_error(kNoOffset, "GPU batch: more than 2^32-1 calls in the chain");
    calls.push_back({c.func_index - nimp, uint32_t(end), uint32_t(args.size())});
    std::vector<uint8_t> call_kinds(c.args.size(), 0);
    std::copy_n(c.arg_index_kind.begin(), std::min(c.arg_index_kind.size(), c.args.size()), call_kinds.begin());
    for (uint64_t v : as_slots(c.args, c.args_hi, w_)) args.push_back(v);
    for (uint8_t k : as_slots(call_kinds, {}, w_)) kinds.push_back(k);
  }
  // Never empty, so that every pointer is a real allocation.
  args.push_back(0);
  kinds.push_back(0);
  WW_TRY(arena.upload(&W_.then, calls));
  WW_TRY(arena.upload(&W_.then_args, args));
  WW_TRY(arena.upload(&W_.then_arg_kind, kinds));
  W_.pos_total = uint32_t(end);
  return Status::Ok();
}

Status WaveLoop::launch_chain(uint32_t blocks, RunResult& out) {
  if (req_.then.empty()) return launch_until_done(blocks, out);
  if (!req_.launch_per_call) {
    W_.pos_begin = 0;
    W_.pos_end = W_.pos_total;
    return launch_until_done(blocks, out);
  }
  for (uint32_t p = 0; p < W_.pos_total; ++p) {
    if (p > 0 && req_.cancel && req_.cancel->load()) break;
    W_.pos_begin = p;
    W_.pos_end = p + 1;
    // The progress line counts the call under way.
    if (p > 0) WW_CUDA(cudaMemsetAsync(W_.done, 0, sizeof(unsigned long long)));
    WW_TRY(launch_until_done(blocks, out));
  }
  return Status::Ok();
}

Status WaveLoop::launch_until_done(uint32_t blocks, RunResult& out) {
  WW_TRY(launch_and_wait(blocks));
  if (!host_calls_) return Status::Ok();
  for (;;) {
    uint32_t calls = 0;
    // Stopped: the instances waiting for the host stay unfinished.
    if (req_.cancel && req_.cancel->load()) {
      WW_TRY(host_calls_->drain_log(I_, W_.first, out));
      break;
    }
    WW_TRY(host_calls_->serve(W_, I_, W_.first, &calls, out));
    if (calls == 0) break;
    W_.hc.resuming = true;
    WW_TRY(launch_and_wait(blocks));
  }
  W_.hc.resuming = false;
  phase_t_ = Clock::now();
  return Status::Ok();
}

}  // namespace ww::gpu
