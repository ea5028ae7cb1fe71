// What the GPU backend keeps across batches of one process: the pinned
// staging pieces, the host buffers registered for direct copies, and the
// thread that frees a finished batch's device memory while the host
// writes its outputs.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "common/host_column.h"
#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/resources/pinned_staging.cuh"

namespace ww::gpu {
namespace {

// Arenas below this free in place: handing them over costs more than
// their frees, as the spec suite's one-instance batches on the GPU show
// (scripts/gpu-check.sh, part spec), while a large wave block freed in
// place would hold up the batch's outputs (bench/gpu/run.sh, Mandelbrot).
constexpr size_t kBackgroundFreeBytes = size_t(32) << 20;

// Both constructed on first use, after the CUDA runtime started, so they
// are destroyed (the staging unpinned, the free joined) before the
// runtime's own teardown at exit.
// One per GPU: a staging's streams and events belong to its device.
struct KeptStaging {
  std::mutex mu;
  std::map<int, std::unique_ptr<PinnedStaging>> staging;
};

KeptStaging& kept_staging() {
  static KeptStaging k;
  return k;
}

// One idle block per GPU (take_idle_block). Freed at exit like the
// staging, before the runtime's teardown.
struct IdleBlocks {
  std::mutex mu;
  std::map<int, DeviceBlock> idle;
  ~IdleBlocks() {
    for (auto& [device, b] : idle) {
      DeviceScope on(device);
      if (on.status().ok()) cudaFree(b.ptr);
    }
  }
};

IdleBlocks& idle_blocks() {
  static IdleBlocks k;
  return k;
}

// The idle block's size: an eighth of the GPU's memory at the most, 8 GiB,
// which holds the wave blocks of the bench rows (thread-id 10M, Mandelbrot
// 8.3M, hash-wasm 1M) and costs a cudaMalloc of about 0.3 ms on the
// start-up thread. Larger blocks are allocated per batch and freed. (Sized
// by the first GPU asked: the process's GPUs are alike.)
uint64_t idle_block_cap() {
  static const uint64_t cap = [] {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) (void)cudaGetLastError();
    return std::min<uint64_t>(uint64_t(8) << 30, total_b / 8);
  }();
  return cap;
}

// Keeps `b` as the current GPU's idle block when it holds none and `b` is
// no larger than one it would allocate; false: the caller frees `b`.
bool keep_idle_block(DeviceBlock b) {
  if (!b.ptr || b.bytes > idle_block_cap()) return false;
  IdleBlocks& k = idle_blocks();
  std::lock_guard<std::mutex> g(k.mu);
  DeviceBlock& idle = k.idle[current_device()];
  if (idle.ptr) return false;
  idle = b;
  return true;
}

// A thread that runs what it is handed in order (frees, then unloading
// the batch's compiled code) while the caller goes on; started on first
// use. cuModuleUnload waits for a running cudaFree: done on the caller's
// thread, it put the free back on the batch's time.
class BackgroundFrees {
 public:
  ~BackgroundFrees() {
    wait();
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void post(std::function<void()> task) {
    std::lock_guard<std::mutex> g(mu_);
    start_locked();
    tasks_.push_back(std::move(task));
    wake_.notify_all();
  }
  // The GPU's start-up starts the thread, so that a batch's first post
  // does not start it inside the batch's time.
  void start() {
    std::lock_guard<std::mutex> g(mu_);
    start_locked();
  }
  void wait() {
    std::unique_lock<std::mutex> lk(mu_);
    idle_.wait(lk, [&] { return tasks_.empty() && !busy_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      wake_.wait(lk, [&] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stop_, nothing left
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      busy_ = true;
      lk.unlock();
      task();
      task = nullptr;  // what it held goes here, off the caller's thread
      lk.lock();
      busy_ = false;
      if (tasks_.empty()) idle_.notify_all();
    }
  }

  void start_locked() {
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

BackgroundFrees& background_frees() {
  static BackgroundFrees f;
  return f;
}

// Host ranges for direct copies (request_host_pin): queued until the
// GPU's start-up pins them, then registered; a release waits for a
// registration under way.
class HostPins {
 public:
  // Returns whether `p` is (now) requested; `at_start_up`: only while the
  // start-up has not pinned yet.
  bool request(const void* p, uint64_t bytes, bool at_start_up) {
    std::unique_lock<std::mutex> lk(mu_);
    if (at_start_up && started_) return false;
    for (const Range& r : ranges_)
      if (r.p == p) return true;
    ranges_.push_back({static_cast<const uint8_t*>(p), bytes, started_ ? kPinning : kQueued});
    if (!started_) return true;
    lk.unlock();
    pin(p, bytes);
    return true;
  }
  void pin_queued() {
    std::vector<Range> now;
    {
      std::lock_guard<std::mutex> g(mu_);
      started_ = true;
      for (Range& r : ranges_)
        if (r.state == kQueued) {
          r.state = kPinning;
          now.push_back(r);
        }
    }
    for (const Range& r : now) pin(r.p, r.bytes);
  }
  void release(const void* p) {
    std::unique_lock<std::mutex> lk(mu_);
    auto it = find(p);
    settled_.wait(lk, [&] { return (it = find(p)) == ranges_.end() || it->state != kPinning; });
    if (it == ranges_.end()) return;
    const bool pinned = it->state == kPinned;
    ranges_.erase(it);
    lk.unlock();
    if (pinned) (void)cudaHostUnregister(const_cast<void*>(p));
  }
  bool covers(const void* p, uint64_t bytes) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    std::lock_guard<std::mutex> g(mu_);
    for (const Range& r : ranges_)
      if (r.state == kPinned && b >= r.p && b + bytes <= r.p + r.bytes) return true;
    return false;
  }

 private:
  enum State { kQueued, kPinning, kPinned, kFailed };
  struct Range {
    const uint8_t* p;
    uint64_t bytes;
    State state;
  };
  std::vector<Range>::iterator find(const void* p) {
    return std::find_if(ranges_.begin(), ranges_.end(), [&](const Range& r) { return r.p == p; });
  }
  // Portable: every GPU's context sees the memory as pinned; mapped: its
  // kernels may write into it (pinned_for_kernels). A refusal (memory
  // already registered, say) leaves the range to the staging.
  void pin(const void* p, uint64_t bytes) {
    const bool ok =
        cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterPortable | cudaHostRegisterMapped) == cudaSuccess;
    if (!ok) (void)cudaGetLastError();
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = find(p);
      if (it != ranges_.end()) it->state = ok ? kPinned : kFailed;
    }
    settled_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable settled_;
  std::vector<Range> ranges_;
  bool started_ = false;
};

HostPins& host_pins() {
  static HostPins h;
  return h;
}

}  // namespace

void request_host_pin(const void* p, uint64_t bytes) {
  if (p && bytes >= kHostPinMinBytes) (void)host_pins().request(p, bytes, false);
}
bool request_host_pin_at_start_up(const void* p, uint64_t bytes) {
  return p && bytes >= kStartUpPinMinBytes && host_pins().request(p, bytes, true);
}
void release_host_pin(const void* p) { host_pins().release(p); }
bool host_range_pinned(const void* p, uint64_t bytes) { return host_pins().covers(p, bytes); }

void* pinned_for_kernels(void* p, uint64_t bytes) {
  if (!p || !host_range_pinned(p, bytes)) return nullptr;
  int direct = 0;
  if (cudaDeviceGetAttribute(&direct, cudaDevAttrCanUseHostPointerForRegisteredMem, current_device()) == cudaSuccess &&
      direct)
    return p;
  (void)cudaGetLastError();
  void* on_device = nullptr;
  if (cudaHostGetDevicePointer(&on_device, p, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return on_device;
}
void pin_requested_host_ranges() { host_pins().pin_queued(); }

// An arena that goes without release_in_background (a batch that failed)
// frees its block: work of its own may still be queued on it, and cudaFree
// waits for that.
DeviceArena::~DeviceArena() {
  for (const Allocation& a : allocs_) cudaFree(a.ptr);
  if (reserved_.ptr) cudaFree(reserved_.ptr);
}

void DeviceArena::reserve(size_t bytes) {
  reserved_on_ = current_device();
  DeviceBlock b = take_idle_block(bytes);
  if (!b.ptr) {
    // A block larger than the idle one: the idle one stays where the
    // memory beside it holds this block and as much again, else it goes
    // first. Not in the background: a cudaFree waits for the device, and
    // one beside the batch made 16M-instance batches in slices 25 ms
    // slower (bench/RESULTS.md).
    size_t free_b = 0, total_b = 0;
    if (const uint64_t idle = idle_block_bytes();
        idle && (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b < bytes + idle))
      free_idle_block();
    cudaError_t e = cudaMalloc(&b.ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
      // What the plan counted may still be on its way out.
      (void)cudaGetLastError();
      free_idle_block();
      wait_for_background_frees();
      e = cudaMalloc(&b.ptr, bytes);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // out of memory is not sticky; clear it anyway
      return;
    }
    b.bytes = bytes;
  }
  reserved_ = b;
  block_ = static_cast<uint8_t*>(b.ptr);
  block_left_ = b.bytes;
}

void DeviceArena::release_in_background() {
  if (reserved_.ptr) {
    DeviceScope on(reserved_on_);
    if (keep_idle_block(reserved_)) {
      reserved_ = {};
      block_ = nullptr;
      block_left_ = 0;
    }
  }
  size_t total = reserved_.bytes;
  for (const Allocation& a : allocs_) total += a.bytes;
  if (total < kBackgroundFreeBytes) return;  // the destructor frees them
  if (reserved_.ptr) allocs_.push_back({reserved_.ptr, reserved_.bytes});
  reserved_ = {};
  // The host goes on with the batch's outputs meanwhile; the process
  // waits for the frees at exit.
  background_frees().post([allocs = std::move(allocs_), device = current_device()] {
    DeviceScope on(device);
    for (const Allocation& a : allocs) cudaFree(a.ptr);
  });
  allocs_.clear();
}

DeviceBlock take_idle_block(size_t bytes) {
  IdleBlocks& k = idle_blocks();
  std::lock_guard<std::mutex> g(k.mu);
  auto it = k.idle.find(current_device());
  if (it == k.idle.end() || !it->second.ptr || it->second.bytes < bytes) return {};
  return std::exchange(it->second, DeviceBlock{});
}

void free_idle_block() {
  DeviceBlock b;
  {
    IdleBlocks& k = idle_blocks();
    std::lock_guard<std::mutex> g(k.mu);
    auto it = k.idle.find(current_device());
    if (it == k.idle.end()) return;
    b = std::exchange(it->second, DeviceBlock{});
  }
  if (b.ptr) cudaFree(b.ptr);
}

void warm_idle_block() {
  {
    IdleBlocks& k = idle_blocks();
    std::lock_guard<std::mutex> g(k.mu);
    if (k.idle[current_device()].ptr) return;
  }
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  DeviceBlock b{nullptr, std::min<uint64_t>(idle_block_cap(), free_b / 4)};
  if (!b.bytes) return;
  if (cudaMalloc(&b.ptr, b.bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  if (!keep_idle_block(b)) cudaFree(b.ptr);
}

uint64_t idle_block_bytes() {
  IdleBlocks& k = idle_blocks();
  std::lock_guard<std::mutex> g(k.mu);
  auto it = k.idle.find(current_device());
  return it == k.idle.end() ? 0 : it->second.bytes;
}

void retire_in_background(std::shared_ptr<void> object) {
  // What it releases (a staging kept, an idle block) is the poster's GPU's.
  background_frees().post([object = std::move(object), device = current_device()]() mutable {
    DeviceScope on(device);
    object.reset();
  });
}

void wait_for_background_frees() { background_frees().wait(); }

Result<std::shared_ptr<void>> device_buffer(uint64_t bytes) {
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, std::max<uint64_t>(bytes, 16)); e != cudaSuccess) {
    (void)cudaGetLastError();
    return make_error(kNoOffset,
                      "cannot allocate " + std::to_string(bytes) + " bytes of GPU memory: " + cudaGetErrorString(e));
  }
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

Status device_synchronize() {
  WW_CUDA(cudaDeviceSynchronize());
  return Status::Ok();
}

// Memory of our own that transparent huge pages back, touched on every core
// and registered: registering 32 MiB of it took 0.7-0.9 ms on the H200
// host, cudaHostAlloc 10-13 ms (bench/scale/alloc_cost.cu), and this runs
// on the start-up thread of every process that uses the GPU (which took
// 216-230 ms with 8 pieces so pinned, 210-242 ms with 2 cudaHostAlloc'd).
// cudaHostAlloc where registering is refused.
Status PinnedStaging::pin_pieces() {
  const uint64_t bytes = piece_bytes_ * ring_;
  uint8_t* at = nullptr;
  try {
    at = NoInitAllocator<uint8_t>{}.allocate(bytes);
  } catch (const std::bad_alloc&) {
    at = nullptr;  // cudaHostAlloc follows
  }
  if (at) {
    parallel_zero(at, bytes);
    if (cudaHostRegister(at, bytes, cudaHostRegisterDefault) == cudaSuccess) {
      pinned_ = at;
      registered_ = true;
      return Status::Ok();
    }
    (void)cudaGetLastError();  // the refusal is not an error: cudaHostAlloc follows
    NoInitAllocator<uint8_t>{}.deallocate(at, bytes);
  }
  void* p = nullptr;
  WW_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
  pinned_ = static_cast<uint8_t*>(p);
  return Status::Ok();
}

void PinnedStaging::unpin_pieces() {
  if (!pinned_) return;
  if (registered_) {
    (void)cudaHostUnregister(pinned_);
    NoInitAllocator<uint8_t>{}.deallocate(pinned_, piece_bytes_ * ring_);
  } else {
    (void)cudaFreeHost(pinned_);
  }
  pinned_ = nullptr;
  registered_ = false;
}

std::unique_ptr<PinnedStaging> take_kept_staging() {
  KeptStaging& k = kept_staging();
  std::lock_guard<std::mutex> g(k.mu);
  auto it = k.staging.find(current_device());
  return it != k.staging.end() ? std::move(it->second) : nullptr;
}

Result<std::unique_ptr<PinnedStaging>> take_staging(const Tuning& tuning) {
  std::unique_ptr<PinnedStaging> kept = take_kept_staging();
  if (kept && kept->piece_bytes() == tuning.staging_piece_bytes() && kept->pieces() == tuning.staging_pieces)
    return Result<std::unique_ptr<PinnedStaging>>(std::move(kept));
  // Another size than the kept one: its pieces go in the background.
  if (kept) retire_in_background(std::shared_ptr<PinnedStaging>(std::move(kept)));
  auto s = std::make_unique<PinnedStaging>();
  WW_TRY(s->init(tuning.staging_piece_bytes(), tuning.staging_pieces));
  return Result<std::unique_ptr<PinnedStaging>>(std::move(s));
}

void give_staging(std::unique_ptr<PinnedStaging> staging) {
  {
    KeptStaging& k = kept_staging();
    std::lock_guard<std::mutex> g(k.mu);
    std::unique_ptr<PinnedStaging>& kept = k.staging[current_device()];
    if (!kept) {
      kept = std::move(staging);
      return;
    }
  }
  // A second wave loop's own staging, freed here, was 1.4-1.5 ms of its
  // batch's end (cudaFreeHost; two wave loops on one H200,
  // bench/RESULTS.md). Its destructor selects its own GPU.
  if (staging) retire_in_background(std::shared_ptr<PinnedStaging>(std::move(staging)));
}

void prepare_transfers(const Tuning& tuning) {
  auto s = take_staging(tuning);
  if (s.ok()) give_staging(std::move(*s));
  background_frees().start();
}

}  // namespace ww::gpu
