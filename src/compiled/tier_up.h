// Tier-up on the CPU: a program starts on the interpreter at once and its
// hot functions move to compiled code while it runs.
//
// The interpreter counts the calls and loop back-edges of each function
// (TierProfile, per thread) and reports it each time its count passes
// another multiple of the threshold. A reported function is queued;
// threads of a pool (host cores - 1) take the most reported of the queue
// and others in that order, up to a unit's size, and compile them as one
// unit of the module's code (Request::functions: its calls to functions
// outside the unit go through the host). A very large function comes last,
// at -O1, and again at -O2 when nothing else is queued. Once a unit is loaded its functions run compiled from
// their next call on, whoever calls them (NativeCode::runnable): a loop
// that never returns goes on interpreted in the activation running it
// (there is no on-stack replacement; docs/compiled-tier.md says why).
//
// Units are cached by their own content, and the units a module's runs
// made are recorded in the cache under the module: a later run loads the
// cached ones as it starts and compiles the same units again, so that its
// compiles hit the cache.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "compiled/compiled_tier.h"

namespace ww::compiled {

struct TierUpOptions {
  // Calls plus loop back-edges that make a function hot, a power of two.
  // Counted per thread, so in a batch each worker's own share.
  uint32_t threshold = 2048;
  // Compile threads; 0: the host's cores less one, at least one (the
  // program keeps a core: on 2 cores a second compile thread made a
  // CPython run slower than the interpreter alone).
  uint32_t workers = 0;
  // Bytecode words (about three per instruction) a unit takes from the
  // queue, unless its first function is larger: about what the host
  // compiler builds in a second or two, so that a short run still saves
  // units (CPython's compute-heavy script, bench/wasi/cpython-cpu.sh).
  uint32_t unit_words = 4000;
  // A unit holding a function larger than this (words) is compiled at -O1:
  // -O2 takes minutes over such a function (CPython's interpreter loop,
  // 61k words: 83 s at -O2, 41 s at -O1 on one core here), and a program
  // waits for it on the interpreter.
  uint32_t quick_words = 30000;
  // Receives each compile thread's future: the process's end waits for
  // them or stops them (batch::keep_compiling). Required.
  std::function<void(std::future<void>)> keep;
};

struct TierUpStats {
  uint32_t hot = 0;         // functions that reached the threshold
  uint32_t compiled = 0;    // functions with compiled code loaded
  uint32_t units = 0;       // units loaded
  uint32_t cache_hits = 0;  // ... of them from the cache
  uint32_t failed = 0;      // units the compiler could not build
  double compile_s = 0;     // the units' compile time (wall, summed over threads)
  std::string error;        // the first failure, one line
};

class TieredCode;

// Code for `base.module` that starts empty and tiers up. `base` gives the
// module, the fuel setting, the deadline and the cache; its entries and
// functions are ignored.
// Errors: no host compiler, a threshold that is not a power of two.
Result<std::shared_ptr<TieredCode>> start_tier_up(const Request& base, const TierUpOptions& opts);

// What tier-up did so far.
TierUpStats tier_up_stats(const TieredCode& code);

// The NativeCode of `code`, for a Store's native_for.
std::shared_ptr<const NativeCode> as_native(const std::shared_ptr<TieredCode>& code);

}  // namespace ww::compiled
