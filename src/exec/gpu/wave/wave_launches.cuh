// A wave loop's launches: a launch between its timing events with the
// wave's words behind it, the wait for a kernel (spinning, then napping,
// with the progress line, a stop sent on cancel, and the results of a
// streamed wave brought down meanwhile), the calls of a chain, and the
// launches again after the host served the calls instances left for it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "exec/gpu/host_calls/host_call_pass.h"
#include "exec/gpu/wave/wave_buffers.cuh"
#include "exec/gpu/wave/wave_context.cuh"
#include "exec/gpu/wave/wave_transfers.cuh"

namespace ww::gpu {

class WaveLaunches {
 public:
  WaveLaunches(WaveContext& c, WaveBuffers& b, WaveTransfers& x)
      : host_calls(c.serves_host_calls ? std::make_unique<HostCallPass>(*c.req.host_calls, c.layout, c.img) : nullptr),
        c_(c),
        b_(b),
        x_(x) {}

  // The export and the chain after it: in one launch, or one per call.
  Status launch_chain(uint32_t blocks, RunResult& out);
  // Launches the wave, then again for the instances that left for a host
  // call, until none did.
  Status launch_until_done(uint32_t blocks, RunResult& out);
  Status launch_and_wait(uint32_t blocks);
  // The kernel between the wave's timing events, its words behind it.
  Status queue_launch(uint32_t blocks);
  // Waits for `ev`, meanwhile moving the deadline when the batch is
  // cancelled (once: `stop_sent`) and reporting progress.
  Status await_event(cudaEvent_t ev, bool& stop_sent);
  Status send_stop_if_cancelled(bool& stop_sent);
  // The progress line's instances done, about twice a second while a
  // kernel runs (`last_report`: when it last was).
  [[nodiscard]] Status report_progress(Clock::time_point& last_report);
  // The poll stream's copies wait for the kernel's start: made on the
  // first poll of a launch (most short waves never poll).
  Status poll_after_start();
  // A streamed wave's finished stretches brought down until its kernel ends.
  [[nodiscard]] Status stream_results(bool& stop_sent);
  // Sleeps `us` between polls of a running kernel, on a timer that wakes
  // within microseconds of it.
  static void nap(std::chrono::microseconds us);

  // Serves the calls instances leave their kernel for (null: none can).
  const std::unique_ptr<HostCallPass> host_calls;
  bool poll_waits = false;    // the poll stream has yet to wait for the launch's start
  bool setup_queued = false;  // the kernel follows the wave's set-up without a wait

 private:
  WaveContext& c_;
  WaveBuffers& b_;
  WaveTransfers& x_;
};

}  // namespace ww::gpu
