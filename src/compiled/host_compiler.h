// The host C++ compiler as the compiled CPU tier's back end: found at build
// time (the compiler that built wasmwarp) or named by $CXX, run as a child
// process on one translation unit, its output a shared object's bytes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"

namespace ww::compiled {

struct HostCompiler {
  std::string path;  // as given: "g++", "/usr/bin/c++"
  // Who the compiler is, for cache keys: its resolved file, size and
  // modification time (an upgrade replaces the file). Read with stat, not
  // `--version`: a run that only looks the module up in the cache must not
  // start a process, a noticeable cost in every small run.
  std::string identity;
};

// $CXX when set, else the compiler wasmwarp was built with. Errors: "host
// C++ compiler 'X' not found" (or not runnable).
Result<HostCompiler> find_host_compiler();

// Flags every compiled CPU module is built with: optimised, position
// independent, exact float semantics (no contraction into FMA), and the
// instruction-set extensions this CPU has that the code may use.
const std::vector<std::string>& host_compile_flags();
// The flags as one string, for cache keys: code built for one CPU's
// extensions must never be loaded on a CPU without them (a shared cache).
const std::string& host_compile_flags_key();

// Compiles each of `sources` (one translation unit each; several compile
// in parallel, one process each) and links them into one shared object.
// Errors name the compiler's first error line, or how it died.
// `quick`: -O1 instead of -O2 (tier-up's units of a very large function,
// which -O2 takes minutes over; compiled/tier_up.h).
Result<std::vector<uint8_t>> compile_shared_object(const HostCompiler& cc, const std::vector<std::string>& sources,
                                                   bool quick = false);

// For a process about to end without waiting for its compiles: kills every
// host compiler running (with the processes it started) and removes their
// scratch directories; no compiler starts after it. A compile it stopped
// fails (its thread may still be waiting for it).
void stop_host_compilers();

// For a signal handler about to end the process (a second Ctrl-C): kills
// every running host compiler's process group (the compiler and the
// processes it started). Async-signal-safe; the scratch directories stay
// (the next compile removes those of dead processes).
void kill_host_compilers_from_signal();

// While it lives, `*cancel` set (Ctrl-C) ends the host compilers running,
// as stop_host_compilers does: a compile the user interrupted fails at
// once instead of compiling every unit of a large module first. After it,
// compilers may start again (the process may go on: the C++ API, Python).
class StopCompilersOnCancel {
 public:
  explicit StopCompilersOnCancel(const std::atomic<bool>* cancel);
  ~StopCompilersOnCancel();
  StopCompilersOnCancel(const StopCompilersOnCancel&) = delete;
  StopCompilersOnCancel& operator=(const StopCompilersOnCancel&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, stopped_ = false;
  std::thread watch_;
};

}  // namespace ww::compiled
