// What the GPU backend keeps between batches, each GPU's in an object of
// its own: its pinned staging ring, its idle device block, and the thread
// that releases a finished batch's device memory and compiled code while
// the host writes the batch's outputs. One Resources object holds them
// for the process: CUDA's contexts are the process's, one per GPU, and so
// is what lives in them. It is made on first use from a thread that has
// used CUDA, so that it goes before the CUDA runtime's own teardown at
// exit. (Host memory registered for direct copies is the process's too,
// whichever GPU copies it: host_pins.cu.)
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/result.h"
#include "exec/gpu/tuning.h"

namespace ww::gpu {

class PinnedStaging;

// A block of device memory held whole (GpuResources::take_idle_block).
struct DeviceBlock {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// A thread that runs what it is handed, in order: frees of device memory,
// then what must wait for them (unloading a batch's compiled code waits
// for a running cudaFree). Started on first use; the GPU's start-up
// starts it, so that no batch's first post starts it inside its time.
class Releaser {
 public:
  Releaser() = default;
  Releaser(const Releaser&) = delete;
  Releaser& operator=(const Releaser&) = delete;
  ~Releaser();
  void post(std::function<void()> task);
  void start();
  // Returns once everything posted so far has run.
  void wait();

 private:
  void loop();
  void start_locked();

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

// One GPU's resources kept between batches. Its methods select no GPU:
// its device's must be the calling thread's for those that touch it.
class GpuResources {
 public:
  explicit GpuResources(int device);
  GpuResources(const GpuResources&) = delete;
  GpuResources& operator=(const GpuResources&) = delete;
  ~GpuResources();
  int device() const { return device_; }

  // The idle block: allocated by the GPU's start-up while the inputs are
  // read; a wave loop's block comes back to it when it holds none, so that
  // the next wave's block costs no cudaMalloc (whose cost is the same for
  // any size up to 4 GiB: bench/scale/alloc_cost.cu). A plan counts it as
  // free memory. take: it when it holds `bytes`, else an empty block.
  DeviceBlock take_idle_block(size_t bytes);
  // Keeps `b` as the idle block when none is held and `b` is no larger
  // than one it would allocate; false: the caller frees `b`.
  bool keep_idle_block(DeviceBlock b);
  void free_idle_block();
  void warm_idle_block();
  uint64_t idle_block_bytes();

  // The staging ring: the kept one when it has the tuning's size, else a
  // new one pinned (the kept one goes to the releaser).
  Result<std::unique_ptr<PinnedStaging>> take_staging(const GpuTuning& tuning);
  // The kept one, whatever its size, or null.
  std::unique_ptr<PinnedStaging> take_kept_staging();
  // Kept for the next batch, or released in the background when one is
  // kept already (a second wave loop's).
  void give_staging(std::unique_ptr<PinnedStaging> staging);

 private:
  // An eighth of the GPU's memory at the most, 8 GiB: it holds the wave
  // blocks of the bench/gpu rows and costs one cudaMalloc on the start-up
  // thread. Larger blocks are allocated per batch and freed.
  uint64_t idle_block_cap();

  const int device_;
  std::mutex mu_;
  DeviceBlock idle_;
  uint64_t idle_cap_ = 0;
  std::unique_ptr<PinnedStaging> staging_;
};

// The process's GPUs' resources and its releaser.
class Resources {
 public:
  static Resources& process();
  // The releaser first runs what it was given, while the GPUs' resources
  // it may hand back to are whole.
  ~Resources() { releaser_.wait(); }
  // GPU `device`'s, made on first use.
  GpuResources& gpu(int device);
  // The calling thread's GPU's.
  GpuResources& current();
  Releaser& releaser() { return releaser_; }

 private:
  Resources() = default;
  std::mutex mu_;
  std::map<int, std::unique_ptr<GpuResources>> gpus_;
  // Declared last: it goes first, having run everything posted to it
  // (which may give staging or blocks back to the GPUs above).
  Releaser releaser_;
};

}  // namespace ww::gpu
