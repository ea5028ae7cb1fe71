// Threads kept for the whole process, for short data-parallel host work
// around a batch: copying a wave's columns out of pinned buffers, zeroing
// result arrays. Starting threads for each 4 MiB piece would cost more
// than the copy; one thread copies results at a small part of what the
// host's cores together reach (bench/scale/staging_pipeline.cu, by the
// number of threads that copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ww {

// Runs fn(0) .. fn(jobs - 1) on the workers and the calling thread and
// returns when all have finished. Calls from several threads take turns;
// a call from inside a job runs its jobs on the calling thread.
void run_on_host_workers(size_t jobs, const std::function<void(size_t)>& fn);

// The number of threads a call of run_on_host_workers uses.
size_t host_worker_count();
// At most `n` threads (the calling one included), for a process that
// shares its cores with others (MPI ranks on one host) or a tuning that
// asks for fewer; the smallest limit asked for holds. Takes effect before
// the first call of run_on_host_workers, which starts them.
void limit_host_workers(size_t n);

// memcpy and memset split over the workers, for large buffers (small ones
// stay on the calling thread). Zeroing memory fresh from the kernel also
// spreads its page faults over the cores.
void parallel_copy(void* dst, const void* src, size_t bytes);
void parallel_fill(void* dst, uint8_t value, size_t bytes);
inline void parallel_zero(void* dst, size_t bytes) { parallel_fill(dst, 0, bytes); }
// Memory that reads as zeros and has never been written (a fresh anonymous
// mapping) brought in on every core: one zero stored per 4 KiB page.
void parallel_fault_in(void* dst, size_t bytes);
// dst[i] = src[i] zero-extended, for i < n, over the workers; the stores
// bypass the cache, so the destination is written without first being
// read (i32 results widened to their 8-byte slots, 8.3M of them in
// Mandelbrot's batch).
void parallel_widen_u32(uint64_t* dst, const uint32_t* src, size_t n);
// The offset of the first byte equal to `value`, or `bytes` when none is:
// memchr over the workers (one thread alone is slow over a large batch's
// flags), or on the calling thread alone up to 4 MB (waking them costs
// more).
size_t parallel_find_byte(const void* p, uint8_t value, size_t bytes);

}  // namespace ww
