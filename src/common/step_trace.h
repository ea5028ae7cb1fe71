// The trace mode, for finding where a batch's time goes below the phases
// of --stats (docs/reference.md, WW_TRACE): WW_TRACE=1 prints each step
// of a batch (the batch engine, compiles, the GPU's start-up, the wave
// loop) to stderr with the milliseconds since the step before;
// WW_TRACE=sync also synchronises the GPU after each step, so that queued
// device work lands on the step that queued it (a synchronise also waits
// for other threads' work). Off, a step costs one branch.
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
  // step would inflate the short steps it measures.
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
      const char* v = std::getenv("WW_TRACE");
      if (!v || !*v || std::string_view(v) == "0") return Mode::Off;
      return std::string_view(v) == "sync" ? Mode::Synchronised : Mode::Async;
    }();
    return m;
  }

  const char* who_;
  Sync sync_;
  bool on_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

}  // namespace ww
