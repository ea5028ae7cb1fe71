// Compiles that outlive the batch that started them (the auto tier's, when
// the batch stops waiting), and the process's end that does not wait for
// them.
#include "batch/background_compiles.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>

#include "batch/batch.h"
#include "cache/code_cache.h"
#include "compiled/host_compiler.h"

namespace ww::batch {
namespace {

struct Kept {
  std::mutex mu;
  // std::async's futures: destroying one waits for its compile, so a
  // process that returns from main() waits for them all here: NVRTC in a
  // thread cannot be stopped, and exit() would run its libraries' static
  // destructors under the running compile (NVRTC's load still under way
  // at exit would crash the process, as gpu_start_up.cc says).
  std::list<std::future<void>> compiles;
  void forget_finished() {
    compiles.remove_if(
        [](const std::future<void>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
  }
};
Kept& kept() {
  static Kept k;
  return k;
}

}  // namespace

void keep_compiling(std::future<void> compile) {
  Kept& k = kept();
  std::lock_guard<std::mutex> g(k.mu);
  k.forget_finished();
  k.compiles.push_back(std::move(compile));
}

Result<std::shared_ptr<compiled::TieredCode>> start_kept_tier_up(const compiled::Request& req) {
  compiled::TierUpOptions o;
  o.keep = [](std::future<void> f) { keep_compiling(std::move(f)); };
  return compiled::start_tier_up(req, o);
}

CompileReport::TierUp tier_up_report(const compiled::TieredCode& code) {
  const compiled::TierUpStats s = compiled::tier_up_stats(code);
  return {true, s.hot, s.compiled, s.units, s.cache_hits, s.failed, s.compile_s, s.error};
}

bool compiles_running() {
  Kept& k = kept();
  std::lock_guard<std::mutex> g(k.mu);
  k.forget_finished();
  return !k.compiles.empty();
}

void exit_stopping_compiles(int status) {
  // In this order: a compile that finishes now cannot start an entry once
  // the cache's lock is held, and an entry under way is finished first.
  hold_cache_writes();
  compiled::stop_host_compilers();
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace ww::batch
