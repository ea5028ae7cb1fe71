// WW_TRACE_STEPS=1 prints each step of a batch to stderr with the
// milliseconds since the step before, for finding where a batch's time
// goes below the phases of --stats. A sync callback (the GPU's device
// synchronise) makes queued device work land on the step that queued it;
// off, a step costs one branch. WW_TRACE_STEPS=async leaves the device
// alone (a synchronise waits behind other threads' frees too).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ww {

class StepTrace {
 public:
  using Sync = void (*)();
  explicit StepTrace(const char* who, Sync sync = nullptr)
      : who_(who), sync_(mode() == Mode::Synchronised ? sync : nullptr), on_(enabled()) {}

  static bool enabled() { return mode() != Mode::Off; }

  void operator()(const char* step) {
    if (!on_) return;
    if (sync_) sync_();
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "[trace %s] %-26s %10.3f ms\n", who_, step,
                 std::chrono::duration<double, std::milli>(now - t_).count());
    t_ = now;
  }

 private:
  enum class Mode { Off, Synchronised, Async };
  static Mode mode() {
    static const Mode m = [] {
      const char* v = std::getenv("WW_TRACE_STEPS");
      if (!v || !*v || *v == '0') return Mode::Off;
      return std::string_view(v) == "async" ? Mode::Async : Mode::Synchronised;
    }();
    return m;
  }

  const char* who_;
  Sync sync_;
  bool on_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

}  // namespace ww
