// A wave loop's traffic with the host: the staging ring it holds, the
// arguments and memory inputs up, the results, memory outputs, trap codes
// and finished flags down (wave_transfers.cu, wave_status.cu), results
// that come down while the kernel runs or that the kernel writes into the
// host's column (wave_stream.cu), and the --image canvas.
#pragma once

#include <cstdint>
#include <memory>

#include "exec/gpu/resources/pinned_staging.cuh"
#include "exec/gpu/wave/wave_buffers.cuh"
#include "exec/gpu/wave/wave_context.cuh"

namespace ww::gpu {

class WaveTransfers {
 public:
  WaveTransfers(WaveContext& c, WaveBuffers& b) : c_(c), b_(b) {}

  // Arguments per instance and memory inputs of a wave to the device.
  Status upload_inputs(uint32_t first, uint32_t n);
  // The rows of v128 arguments' high words, for the whole wave.
  Status prepare_arg_rows(uint32_t n);
  // Rows [r0, r1) of a wave of n starting at instance `first`.
  Status upload_args(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1);
  Status upload_mem_in(uint32_t first, uint32_t r0, uint32_t r1);
  // Memory outputs and results of rows [r0, r1) to the host (once the
  // kernels that write them are done), on the thread's stream or on
  // `down` (a slice's, its kernels seen done).
  Status fetch_outputs(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down = nullptr);
  // Results that are all i32 or f32: cut to 32 bits on the device, widened
  // on the host.
  Status download_results32(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down);
  // Trap codes, where instances trapped and finished flags of the wave.
  // `counts`: the trapped and finished counts, already on the host.
  Status download_status(uint32_t first, uint32_t n, const unsigned long long* counts = nullptr);
  // The wave's counts (unless `counts` is false: they came down already)
  // and its pools' use into the staging's pinned words: queued on the
  // thread's stream, or fetched (queued and waited for).
  Status queue_wave_words(bool counts);
  Status fetch_wave_words(bool counts);
  // Whether the words are final when the wave's kernel ends (no memory
  // outputs' kernels or host calls after it), so that their copy follows
  // the kernel and the host waits once for both.
  bool words_follow_kernel() const { return c_.req.mem_out.empty() && !c_.serves_host_calls; }
  // The flags of a wave whose instances all finish (finished_from_count)
  // written while its kernels run.
  void prefill_finished();
  static constexpr uint32_t kFillAloneBytes = 8u << 20;
  // After the batch's last kernel, the canvas straight into its registered
  // host copy on the outputs stream, beside the results' download; waits
  // for that copy.
  [[nodiscard]] Status queue_canvas(uint32_t first, uint32_t n);
  [[nodiscard]] Status drop_queued_canvas();

  // A wave whose results come down while its kernel runs (wave_stream.cu):
  // written by the kernel straight into the host's pinned column
  // (mapped_results: where it may, else null), or the rows of each
  // stretch (0: not streamed). `sliced`: the wave runs in slices, whose
  // rows are not the wave's.
  uint32_t* mapped_results(uint32_t first, uint32_t n, bool sliced) const;
  uint32_t stream_rows(uint32_t n, bool sliced) const;
  // Whether the wave's one launch finishes its instances and leaves their
  // results to the host as they are, which both of those need.
  bool one_launch_finishes_wave(bool sliced) const;
  // The words of W that say where a wave of n rows puts its results;
  // returns whether its kernel writes them into the host's column.
  bool set_stream_words(uint32_t n, bool sliced);
  [[nodiscard]] Status begin_stream(uint32_t n, bool sliced);

  // Pinned host memory for every per-wave transfer (arguments in; results,
  // traps and flags out): pageable copies are several times slower. Each
  // of its pieces holds staging_rows instances' values.
  std::unique_ptr<PinnedStaging> staging;
  // The staging's pinned words, poll stream and timing events.
  const PinnedStaging::WaveSignals* sig = nullptr;
  uint32_t staging_rows = 0;
  uint32_t streamed_rows = 0;   // this wave's rows whose results are down
  uint64_t streamed_total = 0;  // all waves', for the result
  bool results_mapped = false;  // this wave's kernel writes its results into the host's column
  uint64_t mapped_total = 0;    // all waves' rows so written, for the result
  bool canvas_queued = false;   // queue_canvas's copy follows the last kernel launched
  // Instances below this had trap columns fetched (a wave that ran again
  // after the pool ran out must clear them).
  uint64_t trap_columns_written_to = 0;
  // Instances of the last wave whose trap the device counted, and of all
  // waves.
  uint64_t wave_trapped = 0, trapped_counted = 0;
  bool finished_prefilled = false;  // this wave's rows: prefill_finished()
  bool words_queued = false;        // the last launch's words follow its kernel (words_follow_kernel)

 private:
  WaveContext& c_;
  WaveBuffers& b_;
};

}  // namespace ww::gpu
