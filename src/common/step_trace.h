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
#include <mutex>
#include <string>
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
    char line[192];
    // The time since the process's first step too: steps of several
    // threads (the GPU's start-up beside the batch) line up on it.
    std::snprintf(line, sizeof line, "[trace %s] %-26s @%10.3f %10.3f ms\n", who_, step,
                  std::chrono::duration<double, std::milli>(now - epoch()).count(),
                  std::chrono::duration<double, std::milli>(now - t_).count());
    sink().add(line);
    t_ = std::chrono::steady_clock::now();  // the line's own cost counts to no step
  }

 private:
  // Lines reach stderr at exit, or 64 KiB at a time: a write to a pipe per
  // step inflated the steps of a 0.4 ms batch it measured (bench/RESULTS.md).
  struct Sink {
    std::mutex mu;
    std::string buf;
    void add(const char* line) {
      std::lock_guard<std::mutex> g(mu);
      buf += line;
      if (buf.size() >= (64u << 10)) flush();
    }
    void flush() {
      std::fwrite(buf.data(), 1, buf.size(), stderr);
      buf.clear();
    }
  };
  // Never destroyed, so that a step traced during the process's exit finds
  // it; what is left goes out when the process exits normally.
  static Sink& sink() {
    static Sink* s = [] {
      Sink* made = new Sink;
      std::atexit([] {
        std::lock_guard<std::mutex> g(sink().mu);
        sink().flush();
      });
      return made;
    }();
    return *s;
  }

  static std::chrono::steady_clock::time_point epoch() {
    static const std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
    return t;
  }

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
