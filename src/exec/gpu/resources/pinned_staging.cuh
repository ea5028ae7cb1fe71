// Host <-> device copies of a wave's columns through a ring of pinned
// pieces: the device copies some pieces while the host fills or empties
// another. One pinned buffer the size of a whole wave would take long to
// allocate and free for a 100M-instance wave (and as much host memory
// again as the outputs); one small buffer used piece after piece would
// slow the download of that wave, since copy and host work would take
// turns.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "common/host_workers.h"
#include "common/result.h"
#include "exec/gpu/device/wave_words.h"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

class PinnedStaging {
 public:
  PinnedStaging() = default;
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging() {
    // Its streams and events are its GPU's.
    int before = 0;
    (void)cudaGetDevice(&before);
    (void)cudaSetDevice(device_);
    for (uint32_t k = 0; k < kMaxPieces; ++k)
      if (ev_[k]) cudaEventSynchronize(ev_[k]);  // an upload may still read the piece
    unpin_pieces();
    for (cudaEvent_t e : ev_)
      if (e) cudaEventDestroy(e);
    if (signals_.words) cudaFreeHost(signals_.words);
    if (signals_.poll_stream) cudaStreamDestroy(signals_.poll_stream);
    if (signals_.start) cudaEventDestroy(signals_.start);
    if (signals_.stop) cudaEventDestroy(signals_.stop);
    if (signals_.setup) cudaEventDestroy(signals_.setup);
    if (signals_.words_down) cudaEventDestroy(signals_.words_down);
    for (cudaStream_t c : signals_.compute)
      if (c) cudaStreamDestroy(c);
    if (signals_.outputs) cudaStreamDestroy(signals_.outputs);
    if (signals_.canvas) cudaEventDestroy(signals_.canvas);
    for (auto& events : signals_.slice)
      for (cudaEvent_t e : events)
        if (e) cudaEventDestroy(e);
    (void)cudaSetDevice(before);
  }

  // What a wave loop polls a running kernel and times it with, kept with
  // the pieces between batches: making them (a pinned allocation, a
  // stream, events) would be most of a step of every batch.
  struct WaveSignals {
    // Pinned: [0] instances done, [1] the deadline.
    unsigned long long* words = nullptr;
    // Pinned, after those words: a streamed wave's instances finished per
    // stretch (DevWave::stream_done), copied on poll_stream.
    static constexpr uint32_t kMaxStretches = Tuning::kMaxStretches;
    unsigned int* stream_done = nullptr;
    // Pinned, after those: the wave's counters as the last transfer behind
    // its kernel brought them down (WaveTransfers::queue_wave_words; a sliced
    // wave's counts come behind its outputs instead).
    WaveWords* wave_words = nullptr;
    cudaStream_t poll_stream = nullptr;  // non-blocking: copies while kernels run
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEvent_t setup = nullptr;  // before a wave's set-up, queued without a wait (WaveLoop::init_wave)
    // After the wave's words, when their copy follows the kernel
    // (WaveLaunches::launch_and_wait): the host waits for it instead of `stop`.
    cudaEvent_t words_down = nullptr;
    // A wave in slices (wave_slices.cu): its kernels go on the `compute`
    // streams in turn while the thread's stream copies, so that a slice's
    // set-up and first blocks run beside the last blocks of the slice before.
    // Each slice has events on its compute stream before its set-up, its kernel, its
    // memory outputs and after them, one on the thread's stream after its
    // inputs, and one on `outputs` after its outputs came down when the
    // device queues those itself.
    static constexpr uint32_t kMaxSlices = Tuning::kMaxSlices;
    enum SliceEvent { kSetUp, kKernel, kOutputs, kDone, kInputs, kFetched, kSliceEvents };
    static constexpr uint32_t kComputeStreams = 2;
    cudaStream_t compute[kComputeStreams] = {};
    cudaStream_t outputs = nullptr;  // a slice's or a stretch's outputs coming down
    cudaEvent_t canvas = nullptr;    // the canvas down on `outputs` (WaveTransfers::queue_canvas)
    cudaEvent_t slice[kMaxSlices][kSliceEvents] = {};
  };
  const WaveSignals& signals() const { return signals_; }

  // With 8 pieces of 4 MiB, Mandelbrot's results and image and hash-wasm's
  // 16M messages cross faster than with 2: with more pieces queued the DMA
  // waits less on the host's turn between pieces (a large copy down alone
  // shows it too: bench/scale/staging_pipeline.cu).
  static constexpr uint32_t kMaxPieces = Tuning::kMaxPieces;

  Status init(uint64_t piece_bytes, uint32_t pieces) {
    piece_bytes_ = piece_bytes;
    ring_ = pieces < 2 ? 2 : pieces > kMaxPieces ? kMaxPieces : pieces;
    WW_CUDA(cudaGetDevice(&device_));
    WW_TRY(pin_pieces());
    for (uint32_t k = 0; k < ring_; ++k) {
      buf_[k] = pinned_ + k * piece_bytes;
      WW_CUDA(cudaEventCreateWithFlags(&ev_[k], cudaEventDisableTiming));
    }
    static_assert(WaveSignals::kMaxStretches * sizeof(unsigned int) <= 14 * sizeof(unsigned long long));
    static_assert(alignof(WaveWords) <= 16 * sizeof(unsigned long long));
    WW_CUDA(cudaHostAlloc(&signals_.words, 16 * sizeof(unsigned long long) + sizeof(WaveWords), cudaHostAllocDefault));
    signals_.stream_done = reinterpret_cast<unsigned int*>(signals_.words + 2);
    signals_.wave_words = new (signals_.words + 16) WaveWords{};
    WW_CUDA(cudaStreamCreateWithFlags(&signals_.poll_stream, cudaStreamNonBlocking));
    WW_CUDA(cudaEventCreate(&signals_.start));
    WW_CUDA(cudaEventCreate(&signals_.stop));
    WW_CUDA(cudaEventCreate(&signals_.setup));
    WW_CUDA(cudaEventCreateWithFlags(&signals_.words_down, cudaEventDisableTiming));
    for (cudaStream_t& c : signals_.compute) WW_CUDA(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
    WW_CUDA(cudaStreamCreateWithFlags(&signals_.outputs, cudaStreamNonBlocking));
    WW_CUDA(cudaEventCreateWithFlags(&signals_.canvas, cudaEventDisableTiming));
    for (auto& events : signals_.slice)
      for (cudaEvent_t& e : events) WW_CUDA(cudaEventCreate(&e));
    return Status::Ok();
  }
  uint64_t piece_bytes() const { return piece_bytes_; }
  uint32_t pieces() const { return ring_; }
  int device() const { return device_; }

  // enqueue(p, buf, stream) queues piece p's copy into buf; consume(p, buf)
  // reads it once it has arrived, while the next pieces are on their way.
  // The copies go on the thread's stream, after what it queued before, or
  // on `stream` (a wave's slices: outputs that the host saw finished need
  // not wait for the next slice's inputs, queued on the thread's stream).
  template <class Enqueue, class Consume>
  Status download(uint64_t pieces, Enqueue&& enqueue, Consume&& consume, cudaStream_t stream = nullptr) {
    if (!stream) stream = stream_;
    const uint64_t base = cursor_;
    cursor_ += pieces;
    uint64_t queued = 0;
    for (uint64_t p = 0; p < pieces; ++p) {
      // A piece's buffer is free once the piece ring_ before it was consumed
      // (on this thread, just now), and once an upload's copy out of it
      // (on the thread's stream) is done.
      for (; queued < pieces && queued < p + ring_; ++queued) {
        const uint32_t slot = uint32_t((base + queued) % ring_);
        if (stream != stream_) WW_CUDA(cudaStreamWaitEvent(stream, ev_[slot], 0));
        WW_TRY(enqueue(queued, buf_[slot], stream));
        WW_CUDA(cudaEventRecord(ev_[slot], stream));
      }
      const uint32_t slot = uint32_t((base + p) % ring_);
      WW_CUDA(cudaEventSynchronize(ev_[slot]));
      consume(p, buf_[slot]);
    }
    return Status::Ok();
  }

  // produce(p, buf) fills buf on the host while the pieces before are
  // copied; enqueue(p, buf, stream) queues its copy to the device. The last
  // copies may still be under way on return: what reads the data is queued
  // after them on the thread's stream, or waits for an event recorded there
  // (a wave's slices: waiting here would leave each slice's last piece
  // crossing while the host stood idle).
  template <class Produce, class Enqueue>
  Status upload(uint64_t pieces, Produce&& produce, Enqueue&& enqueue) {
    for (uint64_t p = 0; p < pieces; ++p) {
      const uint32_t slot = uint32_t(cursor_++ % ring_);
      // The piece ring_ before, or an earlier call's, may be leaving this buffer.
      WW_CUDA(cudaEventSynchronize(ev_[slot]));
      produce(p, buf_[slot]);
      WW_TRY(enqueue(p, buf_[slot], stream_));
      WW_CUDA(cudaEventRecord(ev_[slot], stream_));
    }
    return Status::Ok();
  }

  // `bytes` from device `from` to host `to`, through the pieces (on
  // `stream`, as download's).
  Status fetch(void* to, const void* from, uint64_t bytes, cudaStream_t stream = nullptr) {
    if (host_range_pinned(to, bytes)) {  // straight into registered memory
      if (!stream) stream = stream_;
      WW_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, stream));
      WW_CUDA(cudaStreamSynchronize(stream));
      return Status::Ok();
    }
    const uint64_t pieces = (bytes + piece_bytes_ - 1) / piece_bytes_;
    return download(
        pieces,
        [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
          WW_CUDA(cudaMemcpyAsync(buf, static_cast<const uint8_t*>(from) + p * piece_bytes_, piece_of(p, bytes),
                                  cudaMemcpyDeviceToHost, s));
          return Status::Ok();
        },
        [&](uint64_t p, void* buf) {
          parallel_copy(static_cast<uint8_t*>(to) + p * piece_bytes_, buf, piece_of(p, bytes));
        },
        stream);
  }

  // `bytes` from host `from` to device `to`, through the pieces (a pageable
  // cudaMemcpy of a large memory input is far slower: bench/scale/alloc_cost.cu
  // times pinned and pageable copies).
  Status send(void* to, const void* from, uint64_t bytes) {
    if (host_range_pinned(from, bytes)) {
      WW_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream_));
      return Status::Ok();
    }
    const uint64_t pieces = (bytes + piece_bytes_ - 1) / piece_bytes_;
    return upload(
        pieces,
        [&](uint64_t p, void* buf) {
          parallel_copy(buf, static_cast<const uint8_t*>(from) + p * piece_bytes_, piece_of(p, bytes));
        },
        [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
          WW_CUDA(cudaMemcpyAsync(static_cast<uint8_t*>(to) + p * piece_bytes_, buf, piece_of(p, bytes),
                                  cudaMemcpyHostToDevice, s));
          return Status::Ok();
        });
  }

 private:
  uint64_t piece_of(uint64_t p, uint64_t bytes) const {
    const uint64_t off = p * piece_bytes_;
    return bytes - off < piece_bytes_ ? bytes - off : piece_bytes_;
  }

  // The pieces, one pinned block (pinned_staging.cu).
  Status pin_pieces();
  void unpin_pieces();

  uint64_t piece_bytes_ = 0;
  uint32_t ring_ = 2;
  uint64_t cursor_ = 0;  // the next piece's place in the ring, across calls
  int device_ = 0;
  uint8_t* pinned_ = nullptr;
  bool registered_ = false;  // pinned_ is NoInitAllocator's and registered, else cudaHostAlloc'd
  void* buf_[kMaxPieces] = {};
  cudaEvent_t ev_[kMaxPieces] = {};
  // The calling thread's default stream (the project is built with
  // per-thread default streams): copies wait for the kernels the thread
  // queued before them, and its kernels after them wait for the copies,
  // while other threads' wave loops go on.
  const cudaStream_t stream_ = cudaStreamPerThread;
  WaveSignals signals_;
};

// Each GPU keeps its staging between batches (GpuResources: pinning
// takes milliseconds, and the GPU's start-up pins it while the inputs are
// read).

}  // namespace ww::gpu
