// A wave's words (its trapped and finished counts, the pools' use, the
// ignored pixels) and its rows' status: trap codes and finished flags,
// from the device or, where the counts vouch for them, written on the
// host while the kernel runs.
#include "exec/gpu/wave/wave_transfers.cuh"

#include <algorithm>
#include <cstring>

namespace ww::gpu {

// What the host reads after every wave (WaveWords) comes down in one
// transfer; without `counts`, those are on the host already and stay as
// they came.
Status WaveTransfers::queue_wave_words(bool counts) {
  static_assert(sizeof(WaveWords) % 8 == 0 && offsetof(WaveWords, pool_used) % 8 == 0);
  const size_t from = counts ? 0 : offsetof(WaveWords, pool_used);
  WW_CUDA(cudaMemcpyAsync(reinterpret_cast<char*>(sig->wave_words) + from,
                          reinterpret_cast<const char*>(b_.wave_words) + from, sizeof(WaveWords) - from,
                          cudaMemcpyDeviceToHost, cudaStreamPerThread));
  return Status::Ok();
}

Status WaveTransfers::fetch_wave_words(bool counts) {
  WW_TRY(queue_wave_words(counts));
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  return Status::Ok();
}

// While the kernels run the host has nothing else to do: filling the flags
// then (a wave whose count falls short fetches them over this) takes what
// the fill would cost after them, mostly first touches of the column's
// pages, off the batch's time (SHA-256 at 1M instances, bench/gpu/trace.sh's
// sha256 row).
void WaveTransfers::prefill_finished() {
  finished_prefilled = c_.finished_from_count();
  if (!finished_prefilled) return;
  uint8_t* flags = c_.dest.finished + (b_.W.first - c_.req.index_base);
  // Up to a few MB this thread alone is done first: waking the host's
  // workers for thread-id's 1 MB would take them past its kernel's end.
  if (b_.W.n <= kFillAloneBytes) std::memset(flags, 1, b_.W.n);
  else parallel_fill(flags, 1, b_.W.n);
}

Status WaveTransfers::download_status(uint32_t first, uint32_t n, const unsigned long long* counts_on_host) {
  // Through the pinned pieces: the device copies at full speed while the
  // host moves the bytes where they belong.
  auto fetch = [&](void* to, const void* from, uint64_t bytes) { return staging->fetch(to, from, bytes); };
  // Every trap on the device is counted (finish_instance, the pool's
  // out-of-memory, the memory kernels' records that do not fit); the host
  // writes those of calls it served, and a resident batch's instances keep
  // the traps of earlier calls, so those download the columns always.
  // Otherwise a wave with none trapped needs no trap columns: zeros are
  // written here rather than brought down (9 bytes an instance: 150 MB at
  // SHA-256's 16M instances).
  // Likewise the flags, when every instance finished: a chain of calls
  // counts an instance once per call, a resident batch per call, and host
  // calls resume instances, so those download them.
  unsigned long long counts[2] = {0, 0};  // trapped, finished
  if (!words_queued) WW_TRY(fetch_wave_words(!counts_on_host));
  std::copy_n(counts_on_host ? counts_on_host : sig->wave_words->counts, 2, counts);
  const unsigned long long trapped = counts[0];
  wave_trapped = trapped;
  trapped_counted += trapped;
  const bool codes_known = !c_.req.resident && !c_.serves_host_calls;
  if (codes_known && trapped == 0) {
    // A destination that starts zeroed holds zeros where no wave wrote.
    // On every core: one thread would take far longer than the kernel for
    // 8.3M instances' columns.
    if (!c_.dest.trap_words_zero || first < trap_columns_written_to) {
      parallel_zero(c_.dest.traps + first, n);
      parallel_zero(c_.dest.trap_func + first, uint64_t(n) * 4);
      parallel_zero(c_.dest.trap_pc + first, uint64_t(n) * 4);
    }
  } else {
    WW_TRY(fetch(c_.dest.traps + first, b_.W.trap, n));
    WW_TRY(fetch(c_.dest.trap_func + first, b_.W.trap_func, uint64_t(n) * 4));
    WW_TRY(fetch(c_.dest.trap_pc + first, b_.W.trap_pc, uint64_t(n) * 4));
    trap_columns_written_to = std::max(trap_columns_written_to, uint64_t(first) + n);
  }
  if (c_.finished_from_count() && counts[1] == n) {
    if (!finished_prefilled) parallel_fill(c_.dest.finished + first, 1, n);
  } else {
    WW_TRY(fetch(c_.dest.finished + first, b_.W.finished, n));
  }
  WW_TRY(c_.end_phase(c_.download_ms));
  c_.trace("wave: download traps, flags");
  return Status::Ok();
}

}  // namespace ww::gpu
