// What of a span of the batch's own work counts in its wall time once the
// GPU's start-up ran beside it: only what came after the start-up had made
// the GPU ready (batch.cc counts the result columns' set-up so). The
// start-up's stages end with or without a GPU, so this runs everywhere.
#include "exec/gpu/executor/gpu_start_up.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace ww::batch {
namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

TEST(GpuStartUp, OnlyWhatCameAfterTheGpuWasReadyCounts) {
  warm_up_gpu(Tier::Interp);  // once per process: a later call keeps the first start-up
  wait_for_warm_up();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const Clock::time_point now = Clock::now();
  const Clock::time_point long_ago = now - std::chrono::hours(1);
  // From long before the start-up: only its part after the ready point.
  const double after_ready = ms_after_gpu_ready(long_ago, now);
  EXPECT_GE(after_ready, 2.0);
  EXPECT_LT(after_ready, ms(now - long_ago));
  const Clock::time_point ready_at =
      now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(after_ready));
  // Ended before the GPU was ready: nothing; began after it: all of it.
  EXPECT_EQ(ms_after_gpu_ready(long_ago, ready_at - std::chrono::milliseconds(1)), 0.0);
  const Clock::time_point later = ready_at + std::chrono::milliseconds(1);
  EXPECT_DOUBLE_EQ(ms_after_gpu_ready(later, now), ms(now - later));
  // Straddling it: the part after.
  EXPECT_NEAR(ms_after_gpu_ready(ready_at - std::chrono::milliseconds(1), later), 1.0, 1e-3);
  // An empty or reversed span counts nothing.
  EXPECT_EQ(ms_after_gpu_ready(now, now), 0.0);
  EXPECT_EQ(ms_after_gpu_ready(now, later), 0.0);
}

}  // namespace
}  // namespace ww::batch
