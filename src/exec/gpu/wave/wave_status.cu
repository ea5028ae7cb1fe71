// A wave's words (its trapped and finished counts, the pools' use, the
// ignored pixels) and its rows' status: trap codes and finished flags,
// from the device or, where the counts vouch for them, written on the
// host while the kernel runs.
#include "exec/gpu/wave/wave_loop.cuh"

#include <algorithm>
#include <cstring>

namespace ww::gpu {

Status WaveLoop::fetch_wave_words(bool counts) {
  WW_TRY(queue_wave_words(counts));
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  return Status::Ok();
}

bool WaveLoop::finished_from_count() const { return !req_.resident && !host_calls_ && req_.then.empty(); }

// While the kernels run the host has nothing else to do: filling the flags
// then (a wave whose count falls short fetches them over this) took the
// 0.23-0.46 ms the fill cost after them off a 3.5 ms batch (SHA-256, 1M
// instances), mostly first touches of the column's pages.
void WaveLoop::prefill_finished() {
  finished_prefilled_ = finished_from_count();
  if (!finished_prefilled_) return;
  uint8_t* flags = dest_.finished + (W_.first - req_.index_base);
  // Up to a few MB this thread alone is done first: waking the host's
  // workers for thread-id's 1 MB took 0.17-0.31 ms, past its kernel's end
  // (bench/RESULTS.md).
  if (W_.n <= kFillAloneBytes) std::memset(flags, 1, W_.n);
  else parallel_fill(flags, 1, W_.n);
}

Status WaveLoop::download_status(uint32_t first, uint32_t n, const unsigned long long* counts_on_host) {
  // Through the pinned pieces: the device copies at full speed while the
  // host moves the bytes where they belong.
  auto fetch = [&](void* to, const void* from, uint64_t bytes) { return staging_->fetch(to, from, bytes); };
  // Every trap on the device is counted (finish_instance, the pool's
  // out-of-memory, the memory kernels' records that do not fit); the host
  // writes those of calls it served, and a resident batch's instances keep
  // the traps of earlier calls, so those download the columns always.
  // Otherwise a wave with none trapped needs no trap columns: zeros are
  // written here (half of the 1 ms of codes and flags in Mandelbrot's
  // 11 ms at 8.3M instances; 150 MB of SHA-256's 16M instances,
  // bench/RESULTS.md).
  // Likewise the flags, when every instance finished: a chain of calls
  // counts an instance once per call, a resident batch per call, and host
  // calls resume instances, so those download them.
  unsigned long long counts[2] = {0, 0};  // trapped, finished
  if (!words_queued_) WW_TRY(fetch_wave_words(!counts_on_host));
  std::copy_n(counts_on_host ? counts_on_host : sig_->wave_words->counts, 2, counts);
  const unsigned long long trapped = counts[0];
  wave_trapped_ = trapped;
  trapped_counted_ += trapped;
  const bool codes_known = !req_.resident && !host_calls_;
  if (codes_known && trapped == 0) {
    // A destination that starts zeroed holds zeros where no wave wrote.
    // On every core: one thread took 7 ms for 8.3M instances' columns.
    if (!dest_.trap_words_zero || first < trap_columns_written_to_) {
      parallel_zero(dest_.traps + first, n);
      parallel_zero(dest_.trap_func + first, uint64_t(n) * 4);
      parallel_zero(dest_.trap_pc + first, uint64_t(n) * 4);
    }
  } else {
    WW_TRY(fetch(dest_.traps + first, W_.trap, n));
    WW_TRY(fetch(dest_.trap_func + first, W_.trap_func, uint64_t(n) * 4));
    WW_TRY(fetch(dest_.trap_pc + first, W_.trap_pc, uint64_t(n) * 4));
    trap_columns_written_to_ = std::max(trap_columns_written_to_, uint64_t(first) + n);
  }
  if (finished_from_count() && counts[1] == n) {
    if (!finished_prefilled_) parallel_fill(dest_.finished + first, 1, n);
  } else {
    WW_TRY(fetch(dest_.finished + first, W_.finished, n));
  }
  WW_TRY(end_phase(download_ms_));
  trace_("wave: download traps, flags");
  return Status::Ok();
}

}  // namespace ww::gpu
