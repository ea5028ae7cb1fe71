// Each GPU's resources kept between batches (its idle block and staging
// ring), the releaser, and the free functions of gpu_backend.h over them.
#include "exec/gpu/resources/gpu_resources.h"

#include <algorithm>
#include <utility>

#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/resources/pinned_staging.cuh"

namespace ww::gpu {

// ---------------------------------------------------------------- Releaser

Releaser::~Releaser() {
  wait();
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Releaser::post(std::function<void()> task) {
  std::lock_guard<std::mutex> g(mu_);
  start_locked();
  tasks_.push_back(std::move(task));
  wake_.notify_all();
}

void Releaser::start() {
  std::lock_guard<std::mutex> g(mu_);
  start_locked();
}

void Releaser::wait() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_.wait(lk, [&] { return tasks_.empty() && !busy_; });
}

void Releaser::loop() {
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

void Releaser::start_locked() {
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

// ----------------------------------------------------------- GpuResources

GpuResources::GpuResources(int device) : device_(device) {}

GpuResources::~GpuResources() {
  DeviceScope on(device_);
  if (!on.status().ok()) return;
  if (idle_.ptr) cudaFree(idle_.ptr);
  staging_.reset();
}

uint64_t GpuResources::idle_block_cap() {
  if (!idle_cap_) {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) (void)cudaGetLastError();
    idle_cap_ = std::min<uint64_t>(uint64_t(8) << 30, total_b / 8);
  }
  return idle_cap_;
}

DeviceBlock GpuResources::take_idle_block(size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  if (!idle_.ptr || idle_.bytes < bytes) return {};
  return std::exchange(idle_, DeviceBlock{});
}

bool GpuResources::keep_idle_block(DeviceBlock b) {
  if (!b.ptr) return false;
  std::lock_guard<std::mutex> g(mu_);
  if (idle_.ptr || b.bytes > idle_block_cap()) return false;
  idle_ = b;
  return true;
}

void GpuResources::free_idle_block() {
  DeviceBlock b;
  {
    std::lock_guard<std::mutex> g(mu_);
    b = std::exchange(idle_, DeviceBlock{});
  }
  if (b.ptr) cudaFree(b.ptr);
}

void GpuResources::warm_idle_block() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (idle_.ptr) return;
  }
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  DeviceBlock b{nullptr, 0};
  {
    std::lock_guard<std::mutex> g(mu_);
    b.bytes = std::min<uint64_t>(idle_block_cap(), free_b / 4);
  }
  if (!b.bytes) return;
  if (cudaMalloc(&b.ptr, b.bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  if (!keep_idle_block(b)) cudaFree(b.ptr);
}

uint64_t GpuResources::idle_block_bytes() {
  std::lock_guard<std::mutex> g(mu_);
  return idle_.bytes;
}

std::unique_ptr<PinnedStaging> GpuResources::take_kept_staging() {
  std::lock_guard<std::mutex> g(mu_);
  return std::move(staging_);
}

Result<std::unique_ptr<PinnedStaging>> GpuResources::take_staging(const GpuTuning& tuning) {
  std::unique_ptr<PinnedStaging> kept = take_kept_staging();
  if (kept && kept->piece_bytes() == tuning.staging_piece_bytes() && kept->pieces() == tuning.staging_pieces)
    return Result<std::unique_ptr<PinnedStaging>>(std::move(kept));
  // Another size than the kept one: its pieces go in the background.
  if (kept) retire_in_background(std::shared_ptr<PinnedStaging>(std::move(kept)));
  auto s = std::make_unique<PinnedStaging>();
  WW_TRY(s->init(tuning.staging_piece_bytes(), tuning.staging_pieces));
  return Result<std::unique_ptr<PinnedStaging>>(std::move(s));
}

void GpuResources::give_staging(std::unique_ptr<PinnedStaging> staging) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!staging_) {
      staging_ = std::move(staging);
      return;
    }
  }
  // A second wave loop's own staging: freeing pinned memory takes
  // milliseconds, which its batch's end would wait for. Its destructor
  // selects its own GPU.
  if (staging) retire_in_background(std::shared_ptr<PinnedStaging>(std::move(staging)));
}

// -------------------------------------------------------------- Resources

Resources& Resources::process() {
  static Resources r;
  return r;
}

GpuResources& Resources::gpu(int device) {
  std::lock_guard<std::mutex> g(mu_);
  std::unique_ptr<GpuResources>& r = gpus_[device];
  if (!r) r = std::make_unique<GpuResources>(device);
  return *r;
}

GpuResources& Resources::current() { return gpu(current_device()); }

// ------------------------------------------------ gpu_backend.h's functions

void warm_idle_block() { Resources::process().current().warm_idle_block(); }
uint64_t idle_block_bytes() { return Resources::process().current().idle_block_bytes(); }

void retire_in_background(std::shared_ptr<void> object) {
  // What it releases (a staging kept, an idle block) is the poster's GPU's.
  Resources::process().releaser().post([object = std::move(object), device = current_device()]() mutable {
    DeviceScope on(device);
    object.reset();
  });
}

void wait_for_background_frees() { Resources::process().releaser().wait(); }

void prepare_transfers(const GpuTuning& tuning) {
  GpuResources& r = Resources::process().current();
  auto s = r.take_staging(tuning);
  if (s.ok()) r.give_staging(std::move(*s));
  Resources::process().releaser().start();
}

}  // namespace ww::gpu
