// The wave loop's state and steps (wave_loop.cu): the module and the
// intrinsics on the device, one wave's buffers, and the steps of a wave
// (initialise, launch until no instance waits for the host, download).
// run_batch (batch_run.cu) drives it over the waves of a batch; a
// ResidentBatch (resident_batch.cu) keeps one wave on the device and runs
// call after call on it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <type_traits>

#include "common/host_workers.h"
#include "common/step_trace.h"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/driver/kernel_launcher.cuh"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/host_calls/host_call_pass.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/plan/gpu_plan.h"
#include "exec/gpu/plan/module_on_device.h"
#include "exec/gpu/resources/device_arena.cuh"
#include "exec/gpu/resources/pinned_staging.cuh"
#include "exec/gpu/wave/stack_pool.h"

namespace ww::gpu {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline void device_sync() { (void)cudaStreamSynchronize(cudaStreamPerThread); }

static_assert(int(DevLayout::Interleaved) == int(MemoryLayout::Interleaved) &&
              int(DevLayout::Contiguous) == int(MemoryLayout::Contiguous) &&
              int(DevLayout::Sparse) == int(MemoryLayout::Sparse));

// A row of values as slots (value k at k * w), `hi` giving v128s' high words.
template <typename T>
std::vector<T> as_slots(const std::vector<T>& values, const std::vector<T>& hi, uint32_t w) {
  if (w == 1) return values;
  std::vector<T> slots(values.size() * w, 0);
  for (size_t k = 0; k < values.size(); ++k) {
    slots[k * w] = values[k];
    if (k < hi.size()) slots[k * w + 1] = hi[k];
  }
  return slots;
}

// Calls f with the layout as a compile-time constant (decltype(L)::value),
// for launching the kernels templated on it.
template <class F>
void with_layout(DevLayout l, F&& f) {
  switch (l) {
    case DevLayout::Interleaved: f(std::integral_constant<DevLayout, DevLayout::Interleaved>{}); break;
    case DevLayout::Contiguous: f(std::integral_constant<DevLayout, DevLayout::Contiguous>{}); break;
    case DevLayout::Sparse: f(std::integral_constant<DevLayout, DevLayout::Sparse>{}); break;
  }
}

// The same for the kernels of the dense layouts only.
template <class F>
void with_dense_layout(DevLayout l, F&& f) {
  if (l == DevLayout::Interleaved) f(std::integral_constant<DevLayout, DevLayout::Interleaved>{});
  else if (l == DevLayout::Contiguous) f(std::integral_constant<DevLayout, DevLayout::Contiguous>{});
}

template <class T>
inline Status download_column0(std::vector<T>& out, const T* dev, uint32_t rows, uint32_t n) {
  // Element k of instance 0 lives at dev[k * n]: one strided copy.
  out.resize(rows);
  if (rows) WW_CUDA(cudaMemcpy2D(out.data(), sizeof(T), dev, sizeof(T) * n, sizeof(T), rows, cudaMemcpyDeviceToHost));
  return Status::Ok();
}

// What a batch needs before its first wave (run_batch, make_resident):
// the device, the launcher, the instances' initial state on the host and
// its image, the request with its layout and entry stack resolved, and
// the plan. Its address must not change: the host functions the store
// links hold `ctx`.
struct PreparedBatch {
  DeviceInfo dev;
  KernelLauncher* launcher = nullptr;
  GpuBatch fallback_batch;
  GpuContext ctx{};
  std::unique_ptr<Store> own_store;
  Store* store = nullptr;
  uint32_t instance = 0;
  GpuImage img;
  BatchRequest resolved;                          // a copy, made only when something changed
  const BatchRequest* rq = nullptr;               // the request, or `resolved`
  uint64_t file_budget = 0, host_call_bytes = 0;  // what the plan adds for files and host calls
  BatchPlan plan;
};
Status prepare_batch(const BatchRequest& req, PreparedBatch& p, StepTrace& trace);
// The plan for p.dev.free_bytes.
Status plan_batch(PreparedBatch& p);
// Chained calls (BatchRequest::then) of defined functions, with arguments
// that fit them.
Status check_then(const BatchRequest& req);

// One batch: the state every wave shares and the steps of one wave.
class WaveLoop {
 public:
  WaveLoop(const BatchRequest& req, KernelLauncher& launcher, StoreImpl& S, uint32_t instance, const GpuImage& img,
           const BatchPlan& plan, Clock::time_point t_start)
      : req_(req), launcher_(launcher), S_(S), instance_(instance), img_(img), plan_(plan), t_start_(t_start) {
    bind_call();
  }
  // The module on the device, the staging held, the wave's buffers cut
  // from one block, the call's words; the host's result arrays when the
  // request gave none.
  Status setup(RunResult& out);
  // Runs instances [first, first + n); `*redo` becomes the number of them,
  // from the first that ran out of the sparse pool on, that must run again
  // (0 when none did).
  Status run_wave(uint32_t first, uint32_t n, RunResult& out, uint32_t* redo);
  // The size of the next wave: the plan's, or for sparse memory what the
  // pool holds at the last wave's use per group.
  uint32_t next_wave_size() const { return stack_wave_cap_ ? std::min(next_wave_, stack_wave_cap_) : next_wave_; }
  // The last wave's rerun is owed even to a lone instance: the pool it ran
  // out of grew.
  bool rerun_owed() const { return stack_pool_grew_; }
  // The intrinsics' buffers (a canvas among them) back to the host: what
  // the batch's outputs wait for after its last wave. release() follows.
  Status finish_outputs() {
    // A canvas coming down is part of the download (it was the 0.7 ms of
    // Mandelbrot's that the phases left out).
    const Clock::time_point t0 = Clock::now();
    const bool canvas_down = canvas_queued_;
    WW_TRY(drop_queued_canvas());  // its copy done
    WW_TRY(download_intrinsics(req_.batch, I_, *staging_, req_.claim ? &canvas_before_ : nullptr,
                               canvas_down || canvas_mapped_, sig_->wave_words->ignored_pixels));
    download_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    trace_("intrinsics' buffers");
    return Status::Ok();
  }
  // What release() needs of the thread that ran the loop: its default
  // stream is per thread, so no other thread can wait for it. After this
  // the rest of release() may run on any thread that selects the loop's
  // GPU (run_batch hands it to the background releaser).
  Status settle_thread() {
    if (settled_) return Status::Ok();
    settled_ = true;
    WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
    return Status::Ok();
  }
  // The wave block to the idle block, the staging to the next batch, once
  // every copy and kernel of this loop has ended: run_batch's end, and a
  // failed batch. The wave block becomes the GPU's idle block (release_in_background): every copy and kernel of this
  // loop has ended before. Streams the batch left idle are only asked:
  // with the ignored-pixel count's copy, five synchronisations here were
  // 0.04-0.06 ms of thread-id's 0.4 ms batch (bench/RESULTS.md).
  Status release() {
    if (released_) return Status::Ok();
    released_ = true;
    WW_TRY(settle_thread());
    if (sig_)
      for (cudaStream_t s : {sig_->poll_stream, sig_->outputs, sig_->compute[0], sig_->compute[1]})
        if (cudaStreamQuery(s) != cudaSuccess) WW_CUDA(cudaStreamSynchronize(s));
    arena_.release_in_background();
    if (staging_) Resources::process().current().give_staging(std::move(staging_));
    return Status::Ok();
  }
  // A resident batch (resident_batch.cu, BatchRequest::resident): its
  // one wave of n instances starts from the image once; then every call
  // runs the request's current export, chain and memory inputs and
  // outputs on the instances as the call before left them. An instance
  // that trapped keeps its trap (the kernels skip it).
  Status begin_resident(uint32_t n);
  Status resident_call(RunResult& out);
  // `len` bytes at `addr` of every instance (zeros for one that trapped),
  // or `record` bytes of `data` per instance written there; a range past
  // any instance's memory is an error.
  Status read_memory(uint64_t addr, uint64_t len, uint8_t* out);
  Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data);
  // Instances of the last wave whose trap the device counted: every trap
  // code raised, the pool's, the stack's and the memory records' included
  // (not those of calls the host served). Without any, no trap column
  // needs a scan.
  uint64_t wave_trapped() const { return wave_trapped_; }
  double kernel_ms() const { return kernel_ms_; }
  void report_phases(RunResult& out) const {
    out.upload_ms = upload_ms_;
    out.memory_setup_ms = memory_setup_ms_;
    out.download_ms = download_ms_;
    out.pool_bytes_used = pool_bytes_used_;
    out.pool_wave_instances = pool_wave_instances_;
    out.wave_slices = wave_slices_;
    out.streamed_rows = streamed_total_;
    out.mapped_rows = mapped_total_;
    out.canvas_mapped = canvas_mapped_;
    out.stack_pool_bytes = stack_pool_.bytes();  // the pool only grows
    out.trapped_counted = trapped_counted_;
  }

 private:
  // The request's export, results and call fields (resident batches
  // change them between calls).
  void bind_call();
  uint64_t wave_block_bytes() const;
  Status alloc_wave_buffers();
  // Buffers for `rows` instances' memory inputs and outputs.
  Status alloc_memory_io(DeviceArena& arena, uint64_t rows);
  // The call's export, fuel, deadline (from `now_ns`, the device's clock),
  // shared arguments and chain, their buffers from `arena`.
  Status prepare_call(DeviceArena& arena, uint64_t now_ns);
  Result<uint64_t> device_now_ns();
  // Arguments per instance and memory inputs to the device; W_ too.
  Status upload_inputs(uint32_t first, uint32_t n);
  // Arguments per instance, memory inputs or device columns: a wave
  // with any waits for them to land.
  bool inputs_on_wire() const;
  // Whether arguments come per instance (uploaded) rather than shared.
  bool args_per_row() const;
  // The rows of v128 arguments' high words, for the whole wave.
  Status prepare_arg_rows(uint32_t n);
  // Rows [r0, r1) of a wave of n starting at instance `first`.
  Status upload_args(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1);
  Status upload_mem_in(uint32_t first, uint32_t r0, uint32_t r1);
  // The memory input kernels and output kernels for the instances `w` and
  // `blocks` cover.
  Status apply_memory_inputs(const DevWave& w, uint32_t blocks, cudaStream_t stream);
  Status launch_mem_out(const DevWave& w, uint32_t blocks, cudaStream_t stream);
  // Fails unless [addr, addr + len) lies in every instance's memory.
  Status check_range(uint64_t addr, uint64_t len, const char* what);
  Status init_wave(uint32_t first, uint32_t n, uint32_t blocks);
  // A wave's set-up on the device, one kernel for every path: W_ where
  // kernels read it, the counts and the stack pool's, the instances'
  // state and their memory when asked (`fresh`), the progress count
  // (`done`). Queued on the thread's stream.
  struct Fresh {
    bool instances, memory, done;
  };
  Status begin_wave(uint32_t n, Fresh fresh);
  Status launch_and_wait(uint32_t blocks);
  // The kernel between the wave's timing events, its words behind it.
  Status queue_launch(uint32_t blocks);
  // Waits for `ev`, meanwhile moving the deadline when the batch is
  // cancelled (once: `stop_sent`) and reporting progress.
  Status await_event(cudaEvent_t ev, bool& stop_sent);
  Status send_stop_if_cancelled(bool& stop_sent);
  // The progress line's instances done, about twice a second while a
  // kernel runs (`last_report`: when it last was).
  [[nodiscard]] Status report_progress(Clock::time_point& last_report);
  // Sleeps `us` between polls of a running kernel, on a timer that wakes
  // within microseconds of it.
  static void nap(std::chrono::microseconds us);
  // A wave in slices (wave_slices.cu): how many (1: the wave runs in one
  // launch), and the wave run so.
  uint32_t slice_count(uint32_t n) const;
  Status run_slices(uint32_t first, uint32_t n, uint32_t slices);
  [[nodiscard]] Status trace_slice_timeline(uint32_t slices) const;
  bool outputs_follow_kernels(uint32_t first, uint32_t n) const;
  [[nodiscard]] Status queue_outputs(uint32_t k, bool last, uint32_t first, uint32_t r0, uint32_t r1);
  [[nodiscard]] Status add_slice_times(uint32_t slices, bool queued_outputs);
  Status launch_slice(uint32_t k, uint32_t r0, uint32_t r1);
  // A wave whose results come down while its kernel runs (wave_stream.cu):
  // written by the kernel straight into the host's pinned column
  // (mapped_results: where it may, else null), or the rows of each
  // stretch (0: not streamed), the wave set up so, and the stretches that
  // finished brought down until the kernel ends.
  uint32_t* mapped_results(uint32_t first, uint32_t n) const;
  uint32_t stream_rows(uint32_t n) const;
  // Whether the wave's one launch finishes its instances and leaves their
  // results to the host as they are, which both of those need.
  bool one_launch_finishes_wave(uint32_t n) const;
  [[nodiscard]] Status begin_stream(uint32_t n);
  // The words of W_ that say where a wave of n rows puts its results;
  // returns whether its kernel writes them into the host's column.
  bool set_stream_words(uint32_t n);
  [[nodiscard]] Status stream_results(bool& stop_sent);
  // Launches the wave, then again for the instances that left for a host
  // call, until none did.
  Status launch_until_done(uint32_t blocks, RunResult& out);
  // The export and the chain after it: in one launch, or one per call.
  Status launch_chain(uint32_t blocks, RunResult& out);
  Status upload_chain(DeviceArena& arena);
  // The host's result arrays when the caller gave none.
  void own_results(RunResult& out, uint32_t n);
  uint32_t host_call_width() const { return host_call_width_of(img_); }
  uint64_t chunk_table_entries() const { return uint64_t(W_.table_stride ? groups_ : 1) * W_.cap_chunks; }
  Status download_wave(uint32_t first, uint32_t n, uint32_t blocks, RunResult& out);
  // After the batch's last kernel, the canvas straight into its registered
  // host copy on the outputs stream, beside the results' download.
  [[nodiscard]] Status queue_canvas(uint32_t first, uint32_t n);
  [[nodiscard]] Status drop_queued_canvas();
  // Memory outputs and results of rows [r0, r1) to the host (once the
  // kernels that write them are done).
  // On the thread's stream, or on `down` (a slice's, its kernels seen done).
  Status fetch_outputs(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down = nullptr);
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
  bool words_follow_kernel() const { return req_.mem_out.empty() && !host_calls_; }
  // The poll stream's copies wait for the kernel's start: made on the
  // first poll of a launch (most short waves never poll).
  Status poll_after_start();
  // Whether every instance of a wave that finishes has its flag from the
  // wave's count alone (no chain, resident batch or host calls), and the
  // flags of the wave's rows written so while its kernels run.
  bool finished_from_count() const;
  void prefill_finished();
  static constexpr uint32_t kFillAloneBytes = 8u << 20;
  // Results that are all i32 or f32: cut to 32 bits on the device, widened
  // on the host.
  Status download_results32(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down);
  Status write_back_first(uint32_t n);
  // Adds the time since the last phase ended to `acc_ms`, once the device
  // has caught up with what was queued.
  Status end_phase(double& acc_ms);
  // The same without waiting for the device (copies still under way count
  // to what comes next).
  void lap(double& acc_ms) {
    const auto now = Clock::now();
    acc_ms += std::chrono::duration<double, std::milli>(now - phase_t_).count();
    phase_t_ = now;
  }
  // The dense layout: every instance's memory back to the image before a
  // wave, the whole buffer the first time, then only the pages the
  // previous wave wrote (the sparse layout's is begin_wave's chunk table).
  Status restore_dense_memory();
  // Sparse: reads how much of the pool the wave took, sizes the next wave
  // and finds the instances that ran out.
  Status account_pool(uint32_t first, uint32_t n, uint32_t* redo);
  // A new pool of `bytes` in place of the old one (its contents never
  // outlive a wave).
  Status set_pool(uint64_t bytes);

  const BatchRequest& req_;
  KernelLauncher& launcher_;
  StoreImpl& S_;
  const uint32_t instance_;
  const GpuImage& img_;
  const BatchPlan& plan_;
  Clock::time_point t_start_;
  const FuncType* ftype_ = nullptr;  // the function whose results the batch returns
  uint32_t nparams_ = 0, nres_ = 0;  // values
  // Slots per value (GpuImage::slot_width): value k's rows in W_.io are
  // k * w_ .. k * w_ + w_ - 1.
  const uint32_t w_ = img_.slot_width;
  bool v128_results_ = false;
  const DevLayout layout_ = DevLayout(plan_.layout);
  const bool sparse_ = plan_.layout == MemoryLayout::Sparse;
  const std::unique_ptr<HostCallPass> host_calls_ =
      uses_host_calls(req_, img_) ? std::make_unique<HostCallPass>(*req_.host_calls, DevLayout(plan_.layout), img_)
                                  : nullptr;
  bool ref_results_ = false;
  bool results32_ = false;                               // every result i32 or f32, one slot each
  uint32_t* results32_scratch_[2] = {nullptr, nullptr};  // a staging piece each, on the device

  DeviceArena arena_;
  ModuleOnDevice mod_;
  DevIntrinsics I_{};
  DevWave W_{};
  std::vector<uint8_t*> d_mem_in_, d_mem_out_;
  // The staging's pinned words, poll stream and timing events.
  const PinnedStaging::WaveSignals* sig_ = nullptr;
  // Pinned host memory for every per-wave transfer (arguments in; results,
  // traps and flags out): pageable copies ran at about 2 GB/s, which made
  // the download of a 100M-instance batch take longer than its kernels.
  // Each of its two pieces holds staging_rows_ instances' values.
  // Pinning costs about 0.45 ms per MiB (H200 host): 4 MiB pieces already
  // copy at full speed.
  std::unique_ptr<PinnedStaging> staging_;
  bool released_ = false;  // release() ran
  bool settled_ = false;   // settle_thread() ran (on the loop's thread)
  uint32_t staging_rows_ = 0;
  std::vector<uint32_t> canvas_before_;              // several GPUs: the canvas this one uploaded
  uint64_t waves_done_ = 0;                          // instances of finished waves (not counting reruns)
  uint64_t wave_trapped_ = 0, trapped_counted_ = 0;  // the last wave's, all waves' (wave_trapped())
  double kernel_ms_ = 0;
  double upload_ms_ = 0, memory_setup_ms_ = 0, download_ms_ = 0;
  BatchRequest::Destination dest_;
  // Instances below this had trap columns fetched (a wave that ran again
  // after the pool ran out must clear them).
  uint64_t trap_columns_written_to_ = 0;
  DevWave* wave_on_device_ = nullptr;  // W_'s copy (DevWave::self)
  uint64_t* d_timer_ = nullptr;        // read_timer_kernel's answer
  uint32_t next_wave_ = 0;
  uint64_t pool_chunks_ = 0;
  uint64_t pool_bytes_used_ = 0;
  uint32_t pool_wave_instances_ = 0;
  uint32_t wave_slices_ = 1;
  unsigned int* stream_done_ = nullptr;  // DevWave::stream_done when a wave streams
  WaveWords* words_ = nullptr;           // the counters DevWave and DevIntrinsics point into
  uint32_t* packed32_ = nullptr;         // DevWave::packed32 when a wave streams 32-bit results
  uint32_t streamed_rows_ = 0;           // this wave's rows whose results are down
  uint64_t streamed_total_ = 0;          // all waves', for the result
  bool results_mapped_ = false;          // this wave's kernel writes its results into the host's column
  uint64_t mapped_total_ = 0;            // all waves' rows so written, for the result
  bool canvas_queued_ = false;           // queue_canvas's copy follows the last kernel launched
  bool canvas_mapped_ = false;           // the kernels draw straight on the host's canvas
  StackPool stack_pool_;
  bool stack_pool_grew_ = false;
  bool finished_prefilled_ = false;  // this wave's rows: prefill_finished()
  bool setup_queued_ = false;        // the kernel follows init_wave's set-up without a wait
  bool words_queued_ = false;        // the last launch's words follow its kernel (words_follow_kernel)
  bool poll_waits_ = false;          // the poll stream has yet to wait for the launch's start
  uint32_t stack_wave_cap_ = 0;
  uint32_t groups_ = 0;        // groups of 32 instances the wave buffers hold
  bool memory_ready_ = false;  // the memory buffer holds the image, but for dirty pages
  Clock::time_point phase_t_ = Clock::now();
  StepTrace trace_{"gpu", device_sync};
};

}  // namespace ww::gpu
