// A wave without inputs per instance whose results come down while its
// kernel runs. The wave's rows form stretches of whole blocks;
// finish_instance counts each stretch's finished instances, the host
// copies the counts while the kernel runs and brings each finished
// stretch's results down through the staging, on the outputs stream,
// beside the kernel's later blocks. Blocks start in order, so the early
// stretches finish first.
// After the kernel only the stretches still running at its end are left,
// where all of Collatz's 4.2M results would otherwise come down after its
// kernel (bench/gpu/run.sh's collatz row).
#include "exec/gpu/wave/wave_launches.cuh"

#include <algorithm>

namespace ww::gpu {
namespace {

// Results a stretch carries at least: below this the copies' and the
// host's fixed costs outweigh the overlap.
constexpr uint64_t kStretchBytes = uint64_t(1) << 20;

}  // namespace

bool WaveTransfers::one_launch_finishes_wave(bool sliced) const {
  // Past a host call, a chain or a resident batch (finished_from_count),
  // the spec runner's write-back and results on the device need the wave
  // whole; a slice's rows are not the wave's.
  return c_.finished_from_count() && !c_.req.write_back && c_.req.device_results.empty() && !sliced;
}

uint32_t WaveTransfers::stream_rows(uint32_t n, bool sliced) const {
  // The kernel alone finishes every instance, and nothing but the results
  // comes down: memory outputs come from kernels after it. 32-bit results
  // need the device to pack them as the instances finish: a packing kernel
  // of its own would wait for the wave's kernel to end.
  if (!c_.nres || !one_launch_finishes_wave(sliced) || !c_.req.mem_out.empty() || !c_.req.device_args.empty() ||
      (c_.results32 && !b_.packed32))
    return 0;
  const uint64_t row_bytes = c_.results32 ? 4 * uint64_t(c_.nres) : 8 * uint64_t(c_.nres) * c_.slot_width;
  const uint32_t cap = c_.req.tuning.stream_stretches;
  const uint64_t stretches = std::min<uint64_t>(uint64_t(n) * row_bytes / kStretchBytes, cap);
  if (stretches < 2) return 0;
  // Each stretch comes down on its own, its pieces pipelined but not with
  // the next stretch's: stretches of whole pieces leave no short piece
  // crossing alone (bench/gpu/run.sh, Mandelbrot).
  const uint64_t piece_rows = c_.results32 ? c_.req.tuning.staging_piece_bytes() / row_bytes : staging_rows;
  uint64_t rows = (n + stretches - 1) / stretches;
  if (piece_rows && rows > piece_rows) rows = (rows + piece_rows - 1) / piece_rows * piece_rows;
  return uint32_t((rows + kBlock - 1) / kBlock * kBlock);
}

// A kernel's stores into registered host memory cross nearly as fast as a
// copy does, and they cross while it runs, where thread-id's 10M results,
// streamed or not, would come down only after its kernel, for its blocks
// all finish at its end (bench/gpu/ab.sh's tid-10M row). One 32-bit
// result an instance, the wave in one launch, and a column that the GPU's
// start-up pinned whole.
uint32_t* WaveTransfers::mapped_results(uint32_t first, uint32_t n, bool sliced) const {
  if (!c_.results32 || c_.nres != 1 || !c_.dest.results32 || !one_launch_finishes_wave(sliced)) return nullptr;
  return static_cast<uint32_t*>(pinned_for_kernels(c_.dest.results32 + first, uint64_t(n) * 4));
}

bool WaveTransfers::set_stream_words(uint32_t n, bool sliced) {
  uint32_t* mapped = mapped_results(b_.W.first - c_.req.index_base, n, sliced);
  b_.W.stream_rows = mapped ? 0 : stream_rows(n, sliced);
  b_.W.stream_done = b_.W.stream_rows ? b_.stream_done : nullptr;
  b_.W.packed32 = mapped ? mapped : b_.W.stream_rows && c_.results32 ? b_.packed32 : nullptr;
  b_.W.packed_results = c_.nres;
  return mapped != nullptr;
}

Status WaveTransfers::begin_stream(uint32_t n, bool sliced) {
  streamed_rows = 0;
  results_mapped = set_stream_words(n, sliced);
  if (results_mapped) mapped_total += n;
  if (b_.W.stream_rows)
    WW_CUDA(cudaMemsetAsync(b_.stream_done, 0, PinnedStaging::WaveSignals::kMaxStretches * sizeof(unsigned int)));
  return Status::Ok();
}

// The host reads the stretches' counts with a copy beside the kernel, as
// the progress line does: a word the kernel writes to host memory reaches
// the host only when the kernel ends (thread-id, 1M instances).
Status WaveLaunches::stream_results(bool& stop_sent) {
  const uint32_t n = b_.W.n, first = b_.W.first - c_.req.index_base, rows = b_.W.stream_rows;
  const uint32_t stretches = (n + rows - 1) / rows;
  const unsigned int* done = x_.sig->stream_done;
  const auto since = Clock::now();
  auto last_report = since;
  while (x_.streamed_rows < n) {
    // Once the kernel has ended (or failed, which await_event reports),
    // the stretches left come down after it in one pipelined fetch.
    if (cudaEventQuery(x_.sig->stop) != cudaErrorNotReady) break;
    const uint32_t k = x_.streamed_rows / rows;
    WW_TRY(poll_after_start());
    WW_CUDA(cudaMemcpyAsync(x_.sig->stream_done, b_.stream_done + k, (stretches - k) * sizeof(unsigned int),
                            cudaMemcpyDeviceToHost, x_.sig->poll_stream));
    WW_CUDA(cudaStreamSynchronize(x_.sig->poll_stream));
    // Every finished stretch from k on, in one fetch.
    uint32_t r1 = x_.streamed_rows;
    for (uint32_t j = 0; j < stretches - k && done[j] == std::min(n, r1 + rows) - r1; ++j) r1 = std::min(n, r1 + rows);
    if (r1 > x_.streamed_rows) {
      c_.trace("wave: stretches finished");
      WW_TRY(x_.fetch_outputs(first, n, x_.streamed_rows, r1, x_.sig->outputs));
      x_.streamed_total += r1 - x_.streamed_rows;
      x_.streamed_rows = r1;
      continue;
    }
    // Naps as await_event's, but shorter: a stretch's results wait for them.
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since);
    nap(std::clamp<std::chrono::microseconds>(waited / 64, std::chrono::microseconds(10),
                                              std::chrono::microseconds(200)));
    WW_TRY(send_stop_if_cancelled(stop_sent));
    WW_TRY(report_progress(last_report));
  }
  c_.trace("wave: results streamed");
  return Status::Ok();
}

}  // namespace ww::gpu
