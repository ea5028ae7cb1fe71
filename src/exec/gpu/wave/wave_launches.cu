// A wave's launches: a launch between its timing events, the wave's words
// behind it, the wait for a kernel (spinning, then napping, with the
// progress line and a stop sent on cancel), the calls of a chain, and the
// launches again after the host served the calls instances left for it.
#include "exec/gpu/wave/wave_launches.cuh"

#include <sys/prctl.h>

#include <algorithm>
#include <thread>

namespace ww::gpu {

Status WaveLaunches::queue_launch(uint32_t blocks) {
  WW_TRY(x_.drop_queued_canvas());
  WW_CUDA(cudaEventRecord(x_.sig->start));
  c_.trace("wave: start event");
  poll_waits = true;
  WW_TRY(c_.launcher.launch(b_.mod.M, b_.W, b_.I, blocks, c_.layout, nullptr));
  c_.trace("wave: kernel launched");
  WW_CUDA(cudaEventRecord(x_.sig->stop));
  c_.trace("wave: stop event");
  // The wave's words come down behind the kernel, and the host waits once
  // for both: fetched after the wait, they would be a round trip of their
  // own, a visible share of a short batch (thread-id's, compiled).
  x_.words_queued = x_.words_follow_kernel();
  if (x_.words_queued) {
    WW_TRY(x_.queue_wave_words(true));
    WW_CUDA(cudaEventRecord(x_.sig->words_down));
  }
  c_.trace("wave: launch");
  return Status::Ok();
}

Status WaveLaunches::launch_and_wait(uint32_t blocks) {
  WW_TRY(queue_launch(blocks));
  x_.prefill_finished();
  c_.trace("wave: finished flags filled");
  bool stop_sent = false;
  if (b_.W.stream_done) WW_TRY(stream_results(stop_sent));
  WW_TRY(await_event(x_.words_queued ? x_.sig->words_down : x_.sig->stop, stop_sent));
  poll_waits = false;
  c_.trace("wave: kernel's end seen");
  float ms = 0;
  WW_CUDA(cudaEventElapsedTime(&ms, x_.sig->start, x_.sig->stop));
  c_.kernel_ms += ms;
  // The host's wait beyond the kernel: the set-up queued before it
  // (init_wave), then a stretch still coming down when the kernel ended,
  // which is the download's; so the phases still add up to the wall time.
  const double host_ms = std::chrono::duration<double, std::milli>(Clock::now() - c_.phase_t).count();
  double late = std::max(0.0, host_ms - double(ms));
  if (setup_queued) {
    float queued = 0;
    WW_CUDA(cudaEventElapsedTime(&queued, x_.sig->setup, x_.sig->start));
    const double setup_ms = std::min(late, double(queued));
    c_.memory_setup_ms += setup_ms;
    late -= setup_ms;
    setup_queued = false;
  }
  if (b_.W.stream_done) c_.download_ms += late;
  c_.phase_t = Clock::now();
  c_.trace("wave: kernel's time");
  return Status::Ok();
}

Status WaveLaunches::await_event(cudaEvent_t ev, bool& stop_sent) {
  const auto since = Clock::now();
  auto last_report = since;
  // Short batches (the spec runner's, thread-id's) finish in microseconds:
  // the first 0.2 ms the host spins, then naps from 20 us. Each nap is a
  // thirty-second of the wait so far, up to 1 ms, so the wake-up after the
  // kernel's end costs it about a thirty-second: naps doubling to 1 ms
  // would wake a kernel of a few ms such as Monte Carlo's late by a large
  // share of its time (bench/gpu/run.sh's montecarlo row).
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
// unless set, long beside a short kernel such as thread-id's. The waiting
// thread's slack is 1 us.
void WaveLaunches::nap(std::chrono::microseconds us) {
  thread_local const bool slack_set = prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) == 0;
  (void)slack_set;
  std::this_thread::sleep_for(us);
}

Status WaveLaunches::report_progress(Clock::time_point& last_report) {
  if (!c_.req.progress || Clock::now() - last_report <= std::chrono::milliseconds(500)) return Status::Ok();
  last_report = Clock::now();
  WW_TRY(poll_after_start());
  WW_CUDA(cudaMemcpyAsync(x_.sig->words, b_.W.done, sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                          x_.sig->poll_stream));
  WW_CUDA(cudaStreamSynchronize(x_.sig->poll_stream));
  c_.req.progress(*x_.sig->words, c_.req.instances, seconds_since(c_.t_start));
  return Status::Ok();
}

Status WaveLaunches::poll_after_start() {
  // The wave's set-up may still be queued before the kernel: a count read
  // before its reset, or a stop overwritten by the wave's own words, would
  // be wrong.
  if (!poll_waits) return Status::Ok();
  poll_waits = false;
  WW_CUDA(cudaStreamWaitEvent(x_.sig->poll_stream, x_.sig->start, 0));
  return Status::Ok();
}

Status WaveLaunches::send_stop_if_cancelled(bool& stop_sent) {
  if (stop_sent || !c_.req.cancel || !c_.req.cancel->load()) return Status::Ok();
  // Running instances stop within kDeadlineTickMask back-edges and stay
  // unfinished; the batch marks them interrupted.
  WW_TRY(poll_after_start());
  WW_CUDA(cudaMemcpyAsync(&b_.wave_on_device->deadline_ns, &x_.sig->words[1], sizeof(uint64_t), cudaMemcpyHostToDevice,
                          x_.sig->poll_stream));
  stop_sent = true;
  return Status::Ok();
}

Status WaveLaunches::launch_chain(uint32_t blocks, RunResult& out) {
  if (c_.req.then.empty()) return launch_until_done(blocks, out);
  if (!c_.req.launch_per_call) {
    b_.W.pos_begin = 0;
    b_.W.pos_end = b_.W.pos_total;
    return launch_until_done(blocks, out);
  }
  for (uint32_t p = 0; p < b_.W.pos_total; ++p) {
    if (p > 0 && c_.req.cancel && c_.req.cancel->load()) break;
    b_.W.pos_begin = p;
    b_.W.pos_end = p + 1;
    // The progress line counts the call under way.
    if (p > 0) WW_CUDA(cudaMemsetAsync(b_.W.done, 0, sizeof(unsigned long long)));
    WW_TRY(launch_until_done(blocks, out));
  }
  return Status::Ok();
}

Status WaveLaunches::launch_until_done(uint32_t blocks, RunResult& out) {
  WW_TRY(launch_and_wait(blocks));
  if (!host_calls) return Status::Ok();
  for (;;) {
    uint32_t calls = 0;
    // Stopped: the instances waiting for the host stay unfinished.
    if (c_.req.cancel && c_.req.cancel->load()) {
      WW_TRY(host_calls->drain_log(b_.I, b_.W.first, out));
      break;
    }
    WW_TRY(host_calls->serve(b_.W, b_.I, b_.W.first, &calls, out));
    if (calls == 0) break;
    b_.W.hc.resuming = true;
    WW_TRY(launch_and_wait(blocks));
  }
  b_.W.hc.resuming = false;
  c_.phase_t = Clock::now();
  return Status::Ok();
}

}  // namespace ww::gpu
