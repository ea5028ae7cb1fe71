#include "common/host_workers.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>

#include "common/cores.h"
#include "common/step_trace.h"

namespace ww {
namespace {

// Memory bandwidth, not core count, bounds these copies: past about 16
// threads a copy gains nothing and the threads cost wake-ups.
constexpr size_t kMaxThreads = 16;
// Below this a thread's share of a copy costs more to hand over than to do.
constexpr size_t kMinBytesPerThread = 256 * 1024;
// A share in up to this many jobs of at least this size.
constexpr size_t kJobsPerThread = 4;
constexpr size_t kMinBytesPerJob = 64 * 1024;

thread_local bool t_inside_job = false;

std::atomic<size_t> g_limit{0};  // limit_host_workers; 0: none

// How long a worker, or the caller waiting for them, spins before it
// sleeps: the pieces of a wave's download come back to back, and waking
// sleeping threads through the mutex and condition variable for each piece
// would cost more than the piece's copy (bench/scale/staging_pipeline.cu).
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins until pred() or kSpin passes; returns pred().
template <class Pred>
bool spin_until(Pred&& pred) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned k = 0;; ++k) {
    if (pred()) return true;
    if ((k & 63) == 63) {
      if (std::chrono::steady_clock::now() >= until) return pred();
      // The spinning threads fill every core: a thread of the process with
      // work (the batch's, the output writer) would wait behind them for a
      // time slice, which would make some runs of bench/gpu/run.sh's rows
      // far slower than the rest.
      sched_yield();
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

// In the trace mode (StepTrace, WW_TRACE): at exit, how many threads took
// part in each run of 16 jobs or more, how long the workers took to join
// and on which CPUs they ran (a process whose workers share their cores
// with another copies slower).
class WorkerTrace {
 public:
  static bool on() { return StepTrace::enabled(); }
  ~WorkerTrace() {
    if (!runs_) return;
    std::fprintf(stderr,
                 "[trace workers] %llu runs of 16+ jobs: %.1f threads each, %.3f ms each, first worker after "
                 "%.3f ms (max %.3f), %d CPUs used\n",
                 (unsigned long long)runs_, double(participants_) / double(runs_), 1e-6 * double(ns_) / double(runs_),
                 1e-6 * double(join_ns_) / double(runs_), 1e-6 * double(max_join_ns_), __builtin_popcountll(cpus_));
  }
  // One run: the caller's clock, then each thread's first job.
  void begin() {
    t0_ = now_ns();
    run_participants_.store(0, std::memory_order_relaxed);
    first_join_.store(0, std::memory_order_relaxed);
  }
  void joined(bool worker) {
    run_participants_.fetch_add(1, std::memory_order_relaxed);
    const int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < 64) cpus_mask_.fetch_or(uint64_t{1} << cpu, std::memory_order_relaxed);
    uint64_t none = 0;
    if (worker) first_join_.compare_exchange_strong(none, now_ns() - t0_, std::memory_order_relaxed);
  }
  void end() {
    ++runs_;
    ns_ += now_ns() - t0_;
    participants_ += run_participants_.load(std::memory_order_relaxed);
    const uint64_t j = first_join_.load(std::memory_order_relaxed);
    join_ns_ += j;
    max_join_ns_ = std::max(max_join_ns_, j);
    cpus_ = cpus_mask_.load(std::memory_order_relaxed);
  }

 private:
  static uint64_t now_ns() {
    return uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }
  uint64_t t0_ = 0, runs_ = 0, ns_ = 0, participants_ = 0, join_ns_ = 0, max_join_ns_ = 0, cpus_ = 0;
  std::atomic<uint64_t> run_participants_{0}, first_join_{0}, cpus_mask_{0};
};

class Workers {
 public:
  Workers() {
    size_t hw = size_t(usable_cores());
    if (const size_t limit = g_limit.load()) hw = std::min(hw, limit);
    const size_t n = std::min(hw, kMaxThreads) - 1;
    for (size_t k = 0; k < n; ++k) threads_.emplace_back([this] { loop(); });
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  size_t count() const { return threads_.size() + 1; }

  void run(size_t jobs, const std::function<void(size_t)>& fn) {
    if (jobs == 0) return;
    if (jobs == 1 || threads_.empty() || t_inside_job) {
      for (size_t j = 0; j < jobs; ++j) fn(j);
      return;
    }
    std::lock_guard<std::mutex> turn(turn_mu_);
    const uint64_t last = ticket_.load(std::memory_order_relaxed) >> 32;
    // Closed first, so that a worker still looking at the last run cannot
    // claim a job of this one by the fields below (its claim would compare
    // against the last run's ticket, which no longer holds).
    ticket_.store(last << 32 | kClosed, std::memory_order_seq_cst);
    tracing_.store(WorkerTrace::on() && jobs >= 16, std::memory_order_relaxed);
    if (tracing_.load(std::memory_order_relaxed)) trace_.begin();
    done_jobs_.store(0, std::memory_order_relaxed);
    fn_.store(&fn, std::memory_order_relaxed);
    jobs_.store(jobs, std::memory_order_release);
    {
      // Under the mutex, so that a worker about to sleep sees it first.
      std::lock_guard<std::mutex> g(mu_);
      ticket_.store((last + 1) << 32, std::memory_order_release);
    }
    wake_.notify_all();
    take_jobs(last + 1, false);
    // The caller waits for the jobs, not for the workers: a worker still
    // asleep when they are all taken never touches this run (waiting for
    // every worker to wake takes longer than one thread's 1 MB copy).
    auto all_done = [&] { return done_jobs_.load(std::memory_order_acquire) == jobs; };
    if (!spin_until(all_done)) {
      std::unique_lock<std::mutex> lk(mu_);
      done_.wait(lk, all_done);
    }
    if (tracing_.load(std::memory_order_relaxed)) trace_.end();
  }

 private:
  static constexpr uint64_t kClosed = 0xffffffffu;

  // Claims the jobs of `run` until none is left. A claim is a compare and
  // swap of the whole ticket: it fails once the run has ended, so fn_ is
  // the run's own when it is called.
  void take_jobs(uint64_t run, bool worker) {
    t_inside_job = true;
    bool took = false;
    for (;;) {
      uint64_t t = ticket_.load(std::memory_order_acquire);
      if (t >> 32 != run) break;
      const uint64_t j = t & kClosed;
      const size_t jobs = jobs_.load(std::memory_order_acquire);
      if (j >= jobs) break;
      if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) continue;
      if (!took && tracing_.load(std::memory_order_relaxed)) trace_.joined(worker);
      took = true;
      (*fn_.load(std::memory_order_relaxed))(size_t(j));
      if (done_jobs_.fetch_add(1, std::memory_order_acq_rel) + 1 == jobs) {
        std::lock_guard<std::mutex> g(mu_);
        done_.notify_one();
      }
    }
    t_inside_job = false;
  }

  void loop() {
    uint64_t seen = 0;
    auto changed = [&] { return stop_.load() || ticket_.load(std::memory_order_acquire) >> 32 != seen; };
    for (;;) {
      if (!spin_until(changed)) {
        std::unique_lock<std::mutex> lk(mu_);
        wake_.wait(lk, changed);
      }
      if (stop_.load()) return;
      seen = ticket_.load(std::memory_order_acquire) >> 32;
      take_jobs(seen, true);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex turn_mu_;  // one run at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  // The run's number (high half) and its next job (low half; kClosed while
  // a run's fields change).
  std::atomic<uint64_t> ticket_{0};
  std::atomic<const std::function<void(size_t)>*> fn_{nullptr};
  std::atomic<size_t> jobs_{0};
  std::atomic<size_t> done_jobs_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> tracing_{false};  // this run's
  WorkerTrace trace_;
};

Workers& workers() {
  static Workers w;
  return w;
}

// f(offset, length) over `bytes` split into jobs; up to `alone` bytes (when
// more than one thread's share) on the calling thread alone.
template <class F>
void split(size_t bytes, F&& f, size_t alone = 0) {
  const size_t threads =
      bytes <= alone ? 1 : std::min(host_worker_count(), std::max<size_t>(bytes / kMinBytesPerThread, 1));
  if (threads == 1) {
    f(size_t{0}, bytes);
    return;
  }
  // Up to four jobs a thread, taken as threads come free: a thread the OS
  // takes away for a while (for the output writer, CUDA's own) holds up a
  // quarter of its share instead of the whole copy.
  const size_t jobs = std::min(threads * kJobsPerThread, std::max(bytes / kMinBytesPerJob, threads));
  // Pieces aligned to 4 KiB, so each page is faulted in by one thread.
  const size_t per = ((bytes + jobs - 1) / jobs + 4095) & ~size_t{4095};
  run_on_host_workers(jobs, [&](size_t j) {
    const size_t off = j * per;
    if (off < bytes) f(off, std::min(per, bytes - off));
  });
}

}  // namespace

void run_on_host_workers(size_t jobs, const std::function<void(size_t)>& fn) { workers().run(jobs, fn); }

size_t host_worker_count() { return workers().count(); }

void limit_host_workers(size_t n) {
  n = std::max<size_t>(n, 1);
  size_t now = g_limit.load();
  while ((now == 0 || n < now) && !g_limit.compare_exchange_weak(now, n)) {
  }
}

namespace {

void copy_streaming(uint8_t* dst, const uint8_t* src, size_t len) {
#ifdef __SSE2__
  size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
  if (head > len) head = len;
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= len; i += 64)
    for (size_t k = 0; k < 64; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + k)));
  std::memcpy(dst + i, src + i, len - i);
  _mm_sfence();  // the streamed stores are seen before the job counts as done
#else
  std::memcpy(dst, src, len);
#endif
}

void widen_u32(uint64_t* dst, const uint32_t* src, size_t n) {
  size_t i = 0;
#ifdef __SSE2__
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15); ++i) dst[i] = src[i];
  const __m128i zero = _mm_setzero_si128();
  for (; i + 4 <= n; i += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_unpacklo_epi32(v, zero));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 2), _mm_unpackhi_epi32(v, zero));
  }
  _mm_sfence();  // the streamed stores are seen before the job counts as done
#endif
  for (; i < n; ++i) dst[i] = src[i];
}

}  // namespace

void parallel_copy(void* dst, const void* src, size_t bytes) {
  // Large copies (a wave's columns to and from the pinned pieces) store
  // past the cache: the destination is not read again soon, and not
  // reading it first saves a third of the memory traffic.
  if (bytes == 0) return;  // dst and src may be null then, which memcpy may not take
  const bool stream = bytes >= (size_t{1} << 20);
  split(bytes, [&](size_t off, size_t len) {
    uint8_t* d = static_cast<uint8_t*>(dst) + off;
    const uint8_t* s = static_cast<const uint8_t*>(src) + off;
    if (stream) copy_streaming(d, s, len);
    else std::memcpy(d, s, len);
  });
}

void parallel_fill(void* dst, uint8_t value, size_t bytes) {
  if (bytes == 0) return;  // dst may be null then
  split(bytes, [&](size_t off, size_t len) { std::memset(static_cast<uint8_t*>(dst) + off, value, len); });
}

void parallel_fault_in(void* dst, size_t bytes) {
  split(bytes, [&](size_t off, size_t len) {
    volatile uint8_t* p = static_cast<uint8_t*>(dst) + off;
    for (size_t k = 0; k < len; k += 4096) p[k] = 0;
  });
}

void parallel_widen_u32(uint64_t* dst, const uint32_t* src, size_t n) {
  // In whole values: split() hands out byte ranges of 4 KiB multiples.
  split(n * 4, [&](size_t off, size_t len) { widen_u32(dst + off / 4, src + off / 4, len / 4); });
}

size_t parallel_find_byte(const void* p, uint8_t value, size_t bytes) {
  // One core reads a few MB faster than the workers wake.
  constexpr size_t kFindAloneBytes = 4u << 20;
  std::atomic<size_t> first{bytes};
  split(
      bytes,
      [&](size_t off, size_t len) {
        if (len == 0) return;  // p may be null then, which memchr does not take
        const void* hit = std::memchr(static_cast<const uint8_t*>(p) + off, value, len);
        if (!hit) return;
        const size_t at = size_t(static_cast<const uint8_t*>(hit) - static_cast<const uint8_t*>(p));
        for (size_t seen = first.load(); at < seen && !first.compare_exchange_weak(seen, at);) {
        }
      },
      kFindAloneBytes);
  return first.load();
}

}  // namespace ww
