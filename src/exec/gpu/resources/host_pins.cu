// Host memory registered with CUDA for direct copies (request_host_pin):
// the process's, whichever GPU copies it (registrations are portable).
// Requests queue until the GPU's start-up pins them, behind the context's
// creation; later ones register at once.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

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

}  // namespace ww::gpu
