#include "exec/gpu/host_calls/host_call_pass.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "common/host_workers.h"

namespace ww::gpu {
namespace {

// Guest bytes for host calls : granule k of the list is
// instance req[k] >> 32's bytes [g * kGranuleBytes, (g + 1) * kGranuleBytes)
// for g = uint32_t(req[k]), into out at k * kGranuleBytes.
inline constexpr uint32_t kGranuleBytes = 1024;
template <DevLayout L>
__global__ void fetch_granules_kernel(DevWave W, const uint64_t* req, uint32_t count, uint32_t* out) {
  constexpr uint32_t kWords = kGranuleBytes / 4;
  for (uint32_t k = blockIdx.x; k < count; k += gridDim.x) {
    const MemAccess<L> m = MemAccess<L>::make(W, uint32_t(req[k] >> 32));
    const uint64_t base = uint64_t(uint32_t(req[k])) * kGranuleBytes;
    for (uint32_t w = threadIdx.x; w < kWords; w += blockDim.x)
      out[uint64_t(k) * kWords + w] = uint32_t(m.load(base + uint64_t(w) * 4, 4));
  }
}

// A calling instance's memory 0 on the host: granules fetched so far,
// and what the call wrote (applied on the device when it resumes).
class FetchedMemory final : public GuestMemory {
 public:
  explicit FetchedMemory(uint64_t size) : size_(size) {}
  uint64_t size() const override { return size_; }

  const uint8_t* read(uint64_t ptr, uint64_t len) override {
    if (len == 0) return scratch(1);
    const uint64_t g0 = ptr / kGranuleBytes, g1 = (ptr + len - 1) / kGranuleBytes;
    bool have = true;
    for (uint64_t g = g0; g <= g1; ++g)
      if (!granules_.count(g)) {
        missing_.push_back(g);
        have = false;
      }
    if (!have) return nullptr;
    if (g0 == g1) return granules_[g0].data() + ptr % kGranuleBytes;
    uint8_t* out = scratch(len);
    for (uint64_t done = 0; done < len;) {
      const uint64_t a = ptr + done, n = std::min<uint64_t>(len - done, kGranuleBytes - a % kGranuleBytes);
      std::memcpy(out + done, granules_[a / kGranuleBytes].data() + a % kGranuleBytes, n);
      done += n;
    }
    return out;
  }
  uint8_t* window(uint64_t ptr, uint64_t len) override {
    windows_.push_back({ptr, len, scratch(std::max<uint64_t>(len, 1))});
    return windows_.back().bytes;
  }
  void written(uint64_t ptr, uint64_t n) override {
    for (auto w = windows_.rbegin(); w != windows_.rend(); ++w) {
      if (ptr < w->ptr || ptr + n > w->ptr + w->len) continue;
      const uint8_t* src = w->bytes + (ptr - w->ptr);
      patches_.push_back({uint32_t(ptr), std::vector<uint8_t>(src, src + n)});
      // Later reads of this call see what it wrote.
      for (uint64_t done = 0; done < n;) {
        const uint64_t a = ptr + done, k = std::min<uint64_t>(n - done, kGranuleBytes - a % kGranuleBytes);
        auto it = granules_.find(a / kGranuleBytes);
        if (it != granules_.end()) std::memcpy(it->second.data() + a % kGranuleBytes, src + done, k);
        done += k;
      }
      return;
    }
  }

  // A new attempt of the call: nothing it did before counts.
  void restart() {
    missing_.clear();
    windows_.clear();
    patches_.clear();
    scratch_.clear();
  }
  std::vector<uint64_t>& missing() { return missing_; }
  void add_granule(uint64_t g, const uint8_t* bytes) { granules_[g].assign(bytes, bytes + kGranuleBytes); }
  // The patch records of dev_state.cuh's DevHostCalls.
  uint64_t patch_bytes() const {
    uint64_t n = 0;
    for (const Patch& p : patches_) n += 8 + ((p.bytes.size() + 3) & ~size_t(3));
    return n;
  }
  void write_patches(uint8_t* out) const {
    for (const Patch& p : patches_) {
      const uint32_t len = uint32_t(p.bytes.size());
      std::memcpy(out, &p.address, 4);
      std::memcpy(out + 4, &len, 4);
      std::memcpy(out + 8, p.bytes.data(), len);
      out += 8 + ((len + 3) & ~3u);
    }
  }

 private:
  struct Window {
    uint64_t ptr, len;
    uint8_t* bytes;
  };
  struct Patch {
    uint32_t address;
    std::vector<uint8_t> bytes;
  };
  uint8_t* scratch(uint64_t n) {
    scratch_.emplace_back(n);
    return scratch_.back().data();
  }
  uint64_t size_;
  std::unordered_map<uint64_t, std::vector<uint8_t>> granules_;
  std::vector<uint64_t> missing_;
  std::vector<Window> windows_;
  std::vector<Patch> patches_;
  std::deque<std::vector<uint8_t>> scratch_;
};

// Descriptor k of the list (instance in the wave, slot, fd, file: four
// words each) into its instance's slot, at offset 0.
__global__ void install_fds_kernel(DevWasi d, uint32_t n, const uint32_t* fds, uint32_t count) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const uint64_t at = uint64_t(fds[4 * k + 1]) * n + fds[4 * k];
  d.fd_of[at] = fds[4 * k + 2] + 1;
  d.file_of[at] = fds[4 * k + 3];
  d.fd_pos[at] = 0;
}

}  // namespace

HostCallPass::~HostCallPass() {
  cudaFree(d_req_);
  cudaFree(d_granules_);
  cudaFree(d_patches_);
  cudaFree(d_installs_);
  for (uint8_t* b : file_buffers_) cudaFree(b);
}

template <class T>
Status HostCallPass::ensure(T*& p, uint64_t& cap, uint64_t count) {
  if (count <= cap) return Status::Ok();
  cudaFree(p);
  p = nullptr;
  cap = std::max<uint64_t>(count, cap * 2);
  WW_CUDA(cudaMalloc(&p, cap * sizeof(T)));
  return Status::Ok();
}

uint64_t HostCallPass::bytes_per_instance(uint32_t width, uint64_t leave_words, bool device_fds) {
  const uint64_t record = 3 * 4 + uint64_t(width) * 8 + 1 + 8 + 4;
  const uint64_t fds = device_fds ? kDevFdSlots * (4 + 4 + 8) : 0;
  return 2 * record + 4 + 1 + 5 * 4 + 8 + 8 + 2 * leave_words * 8 + 1 + fds;
}

// Below this, a half of the frame pool is not worth sizing to the wave.
inline constexpr uint64_t kMinFrameHalfWords = uint64_t(1) << 20;

// The device's stdout and stderr log: big enough that a wave of printing
// programs rarely fills it, small beside the waves' memory.
inline constexpr uint64_t kLogBytes = uint64_t(64) << 20;

Status HostCallPass::alloc_wasi(DeviceArena& arena, const DeviceWasi& dw, DevWasi& d, uint32_t wave) {
  d.on = true;
  WW_TRY(arena.upload(&d.argv, dw.argv.empty() ? std::vector<uint8_t>{0} : dw.argv));
  WW_TRY(arena.upload(&d.env, dw.env.empty() ? std::vector<uint8_t>{0} : dw.env));
  WW_TRY(arena.upload(&d.argv_off, dw.argv_off));
  WW_TRY(arena.upload(&d.env_off, dw.env_off));
  d.argc = uint32_t(dw.argv_off.size() - 1);
  d.envc = uint32_t(dw.env_off.size() - 1);
  d.log_fd[0] = dw.log_stdout;
  d.log_fd[1] = dw.log_stderr;
  d.log_cap = kLogBytes;
  WW_TRY(arena.alloc(&d.log, d.log_cap));
  WW_TRY(arena.alloc(&d.log_used, 2));
  d.log_limit = d.log_used + 1;
  const unsigned long long empty[2] = {0, d.log_cap};
  WW_CUDA(cudaMemcpy(d.log_used, empty, sizeof empty, cudaMemcpyHostToDevice));
  d.out_cap = dw.out_cap;
  WW_TRY(arena.alloc(&d.out_bytes, uint64_t(wave) * 2));
  WW_TRY(arena.alloc(&d.stdio_host, wave));
  d.seed = dw.seed;
  WW_TRY(arena.alloc(&d.rand_count, wave));
  WW_TRY(arena.alloc(&d.exit_code, wave));
  for (int k = 0; k < 4; ++k) {
    d.clock_base[k] = dw.clock_base[k];
    d.clock_res[k] = dw.clock_res[k];
  }
  d.stdio_fdstat_known = dw.stdio_fdstat_known;
  std::memcpy(d.stdio_fdstat, dw.stdio_fdstat, sizeof d.stdio_fdstat);
  d.npreopens = uint32_t(dw.preopen_off.size() - 1);
  WW_TRY(arena.upload(&d.preopen_names, dw.preopen_names.empty() ? std::vector<uint8_t>{0} : dw.preopen_names));
  WW_TRY(arena.upload(&d.preopen_off, dw.preopen_off));
  WW_TRY(arena.alloc(&d.preopen_host, wave));
  if (dw.file_budget) WW_TRY(alloc_files(arena, dw, d, wave));
  return Status::Ok();
}

Status HostCallPass::alloc_files(DeviceArena& arena, const DeviceWasi& dw, DevWasi& d, uint32_t wave) {
  files_budget_ = dw.file_budget;
  uint8_t** data = nullptr;
  uint64_t *size = nullptr, *max_seek = nullptr;
  uint8_t* meta = nullptr;
  WW_TRY(arena.alloc(&data, kMaxDeviceFiles));
  WW_TRY(arena.alloc(&size, kMaxDeviceFiles));
  WW_TRY(arena.alloc(&max_seek, kMaxDeviceFiles));
  WW_TRY(arena.alloc(&meta, uint64_t(kMaxDeviceFiles) * kDevFileMetaBytes));
  d.file_data = data;
  d.file_size = size;
  d.file_max_seek = max_seek;
  d.file_meta = meta;
  WW_TRY(arena.alloc(&d.fd_of, uint64_t(wave) * kDevFdSlots));
  WW_TRY(arena.alloc(&d.file_of, uint64_t(wave) * kDevFdSlots));
  WW_TRY(arena.alloc(&d.fd_pos, uint64_t(wave) * kDevFdSlots));
  files_ = d;
  return Status::Ok();
}

uint64_t HostCallPass::next_table_id() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

int32_t HostCallPass::upload(const DeviceFile& f) {
  std::lock_guard<std::mutex> lock(files_mu_);
  if (files_count_ >= kMaxDeviceFiles || files_bytes_ + f.size > files_budget_) return -1;
  DeviceScope on(device_);
  if (!on.status().ok()) return -1;
  uint8_t* buf = nullptr;
  if (cudaMalloc(&buf, std::max<uint64_t>(f.size, 1)) != cudaSuccess) {
    (void)cudaGetLastError();  // out of memory: the host serves the file
    return -1;
  }
  const uint32_t id = files_count_;
  uint8_t meta[kDevFileMetaBytes];
  std::memcpy(meta, f.filestat, sizeof f.filestat);
  std::memcpy(meta + sizeof f.filestat, f.fdstat, sizeof f.fdstat);
  const bool ok =
      cudaMemcpy(buf, f.bytes, f.size, cudaMemcpyHostToDevice) == cudaSuccess &&
      cudaMemcpy(const_cast<uint8_t**>(files_.file_data) + id, &buf, sizeof buf, cudaMemcpyHostToDevice) ==
          cudaSuccess &&
      cudaMemcpy(const_cast<uint64_t*>(files_.file_size) + id, &f.size, 8, cudaMemcpyHostToDevice) == cudaSuccess &&
      cudaMemcpy(const_cast<uint64_t*>(files_.file_max_seek) + id, &f.max_seek, 8, cudaMemcpyHostToDevice) ==
          cudaSuccess &&
      cudaMemcpy(const_cast<uint8_t*>(files_.file_meta) + uint64_t(id) * kDevFileMetaBytes, meta, sizeof meta,
                 cudaMemcpyHostToDevice) == cudaSuccess &&
      // On this worker's own stream: done before the wave loop's thread
      // relaunches the kernels that read them.
      cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess;
  if (!ok) {
    (void)cudaGetLastError();
    cudaFree(buf);
    return -1;
  }
  file_buffers_.push_back(buf);
  files_bytes_ += f.size;
  ++files_count_;
  return int32_t(id);
}

Status HostCallPass::install_fds(const DevWave& w, const DevIntrinsics& in, const std::vector<uint32_t>& fds) {
  const uint32_t count = uint32_t(fds.size() / 4);
  if (count == 0) return Status::Ok();
  WW_TRY(ensure(d_installs_, installs_cap_, fds.size()));
  WW_CUDA(cudaMemcpy(d_installs_, fds.data(), fds.size() * 4, cudaMemcpyHostToDevice));
  install_fds_kernel<<<(count + 255) / 256, 256>>>(in.wasi, w.n, d_installs_, count);
  WW_CUDA(cudaGetLastError());
  return Status::Ok();
}

Status HostCallPass::begin_wave(const DevWave& w, const DevIntrinsics& in) {
  const DevWasi& d = in.wasi;
  if (!d.on) return Status::Ok();
  WW_CUDA(cudaMemset(d.out_bytes, 0, uint64_t(w.n) * 2 * sizeof(uint64_t)));
  WW_CUDA(cudaMemset(d.stdio_host, 0, w.n));
  WW_CUDA(cudaMemset(d.rand_count, 0, uint64_t(w.n) * sizeof(uint64_t)));
  WW_CUDA(cudaMemset(d.exit_code, 0, uint64_t(w.n) * sizeof(uint64_t)));
  WW_CUDA(cudaMemset(d.preopen_host, 0, w.n));
  if (d.fd_of) WW_CUDA(cudaMemset(d.fd_of, 0, uint64_t(w.n) * kDevFdSlots * sizeof(uint32_t)));
  return Status::Ok();
}

Status HostCallPass::drain_log(const DevIntrinsics& in, uint32_t first, RunResult& out) {
  const DevWasi& d = in.wasi;
  if (!d.on) return Status::Ok();
  unsigned long long used[2] = {0, 0};
  WW_CUDA(cudaMemcpy(used, d.log_used, sizeof used, cudaMemcpyDeviceToHost));
  const uint64_t n = std::min<uint64_t>({used[0], used[1], d.log_cap});
  if (n == 0) return Status::Ok();
  log_.resize(n);
  WW_CUDA(cudaMemcpy(log_.data(), d.log, n, cudaMemcpyDeviceToHost));
  const unsigned long long empty[2] = {0, d.log_cap};
  WW_CUDA(cudaMemcpy(d.log_used, empty, sizeof empty, cudaMemcpyHostToDevice));
  // Records are whole below the limit: each write reserved its own.
  for (uint64_t at = 0; at + 8 <= n;) {
    uint32_t t = 0, word = 0;
    std::memcpy(&t, log_.data() + at, 4);
    std::memcpy(&word, log_.data() + at + 4, 4);
    const uint64_t len = word >> 1;
    server_.device_output(first + t, 1 + (word & 1), log_.data() + at + 8, len);
    at += 8 + ((len + 7) & ~uint64_t(7));
  }
  out.device_output_bytes += n;
  ++out.device_log_drains;
  return Status::Ok();
}

Status HostCallPass::end_wave(const DevWave& w, const DevIntrinsics& in, uint32_t first) {
  const DevWasi& d = in.wasi;
  if (!d.on) return Status::Ok();
  std::vector<uint64_t> codes(w.n);
  WW_CUDA(cudaMemcpy(codes.data(), d.exit_code, codes.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < w.n; ++t)
    if (codes[t] >> 32) server_.device_exit(first + t, uint32_t(codes[t]));
  return Status::Ok();
}

Status HostCallPass::alloc(DeviceArena& arena, DevWave& w, DevIntrinsics& in, uint32_t wave, uint32_t width,
                           uint64_t leave_words) {
  in.wasi = DevWasi{};
  if (const DeviceWasi* dw = server_.device_wasi()) WW_TRY(alloc_wasi(arena, *dw, in.wasi, wave));
  DevHostCalls& h = w.hc;
  h.enabled = true;
  h.resuming = false;
  h.width = width;
  h.out_base = 0;
  wave_ = wave;
  WW_TRY(arena.alloc(&h.count, 1));
  WW_CUDA(cudaMemset(h.count, 0, sizeof *h.count));
  // Two halves of records (DevHostCalls::out_base).
  const uint64_t records = uint64_t(wave) * 2;
  WW_TRY(arena.alloc(&h.calls, records * 3));
  WW_TRY(arena.alloc(&h.io, records * width));
  WW_TRY(arena.alloc(&h.trap, records));
  WW_TRY(arena.alloc(&d_patch_off_, records));
  WW_TRY(arena.alloc(&d_patch_bytes_, records));
  h.patch_off = d_patch_off_;
  h.patch_bytes = d_patch_bytes_;
  WW_TRY(arena.alloc(&h.slot, wave));
  WW_TRY(arena.alloc(&h.waiting, wave));
  for (uint32_t** a : {&h.rs_pc, &h.rs_func, &h.rs_fb, &h.rs_depth, &h.rs_base}) WW_TRY(arena.alloc(a, wave));
  WW_TRY(arena.alloc(&h.rs_fuel, wave));
  h.frames = nullptr;
  h.frames_half = 0;
  if (leave_words) {
    // Shared by the wave: an instance may take more than its share while
    // others leave from shallower calls.
    h.frames_half = std::max(kMinFrameHalfWords, leave_words * wave);
    WW_TRY(arena.alloc(&h.frames, 2 * h.frames_half));
    WW_TRY(arena.alloc(&h.rs_frames, wave));
  }
  WW_TRY(arena.alloc(&h.frames_used, 1));
  WW_CUDA(cudaMemset(h.frames_used, 0, sizeof *h.frames_used));
  return Status::Ok();
}

Status HostCallPass::fetch(const DevWave& w, const std::vector<uint64_t>& req, std::vector<uint8_t>& bytes) {
  const uint32_t count = uint32_t(req.size());
  WW_TRY(ensure(d_req_, req_cap_, count));
  WW_TRY(ensure(d_granules_, granules_cap_, uint64_t(count) * (kGranuleBytes / 4)));
  WW_CUDA(cudaMemcpy(d_req_, req.data(), count * sizeof(uint64_t), cudaMemcpyHostToDevice));
  const uint32_t grid = std::min<uint32_t>(count, 65535);
  switch (layout_) {
    case DevLayout::Interleaved:
      fetch_granules_kernel<DevLayout::Interleaved><<<grid, 256>>>(w, d_req_, count, d_granules_);
      break;
    case DevLayout::Contiguous:
      fetch_granules_kernel<DevLayout::Contiguous><<<grid, 256>>>(w, d_req_, count, d_granules_);
      break;
    case DevLayout::Sparse:
      fetch_granules_kernel<DevLayout::Sparse><<<grid, 256>>>(w, d_req_, count, d_granules_);
      break;
  }
  WW_CUDA(cudaGetLastError());
  bytes.resize(uint64_t(count) * kGranuleBytes);
  WW_CUDA(cudaMemcpy(bytes.data(), d_granules_, bytes.size(), cudaMemcpyDeviceToHost));
  return Status::Ok();
}

Status HostCallPass::serve(DevWave& w, const DevIntrinsics& in, uint32_t first, uint32_t* calls, RunResult& out) {
  const auto t0 = std::chrono::steady_clock::now();
  WW_TRY(drain_log(in, first, out));
  unsigned long long count = 0;
  WW_CUDA(cudaMemcpy(&count, w.hc.count, sizeof count, cudaMemcpyDeviceToHost));
  *calls = uint32_t(count);
  if (count == 0) {
    out.host_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Status::Ok();
  }
  const uint32_t n = uint32_t(count), width = w.hc.width;
  const uint64_t base = w.hc.out_base;
  std::vector<uint32_t> rec(uint64_t(n) * 3);
  std::vector<uint64_t> args(uint64_t(n) * width), io(args.size());
  std::vector<uint8_t> traps(n, 0);
  WW_CUDA(cudaMemcpy(rec.data(), w.hc.calls + base * 3, rec.size() * 4, cudaMemcpyDeviceToHost));
  WW_CUDA(cudaMemcpy(args.data(), w.hc.io + base * width, args.size() * 8, cudaMemcpyDeviceToHost));
  std::vector<FetchedMemory> mems;
  mems.reserve(n);
  for (uint32_t r = 0; r < n; ++r) mems.emplace_back(uint64_t(rec[3 * r + 2]) * kDevPageSize);

  // Rounds: every call not yet served runs; those that read bytes not yet
  // fetched run again once they are (each round one fetch for them all).
  std::vector<uint32_t> pending(n);
  for (uint32_t r = 0; r < n; ++r) pending[r] = r;
  // Per record: the descriptor its call gave the device (slot, fd, file).
  std::vector<uint32_t> gave(files_budget_ ? uint64_t(n) * 3 : 0, ~0u);
  auto serve_one = [&](size_t k) {
    const uint32_t r = pending[k];
    FetchedMemory& m = mems[r];
    m.restart();
    std::copy_n(args.begin() + uint64_t(r) * width, width, io.begin() + uint64_t(r) * width);
    HostCall c;
    c.instance = first + rec[3 * r];
    c.func = rec[3 * r + 1];
    if (c.func >= img_.num_imported_funcs)
      c.foreign_func = int64_t(img_.foreign_funcs[c.func - img_.num_imported_funcs]);
    c.io = io.data() + uint64_t(r) * width;
    c.memory = m.size() ? &m : nullptr;
    c.files = files_budget_ ? this : nullptr;
    server_.serve(c);
    traps[r] = uint8_t(c.trap);
    if (c.fd_slot >= 0) {
      gave[3 * r] = uint32_t(c.fd_slot);
      gave[3 * r + 1] = c.fd;
      gave[3 * r + 2] = c.file;
    }
  };
  while (!pending.empty()) {
    if (server_.parallel()) run_on_host_workers(pending.size(), serve_one);
    else
      for (size_t k = 0; k < pending.size(); ++k) serve_one(k);
    std::vector<uint32_t> again;
    std::vector<uint64_t> req;
    for (uint32_t r : pending) {
      std::vector<uint64_t>& miss = mems[r].missing();
      if (miss.empty()) continue;
      std::sort(miss.begin(), miss.end());
      miss.erase(std::unique(miss.begin(), miss.end()), miss.end());
      again.push_back(r);
      for (uint64_t g : miss) req.push_back(uint64_t(rec[3 * r]) << 32 | g);
    }
    if (again.empty()) break;
    std::vector<uint8_t> bytes;
    WW_TRY(fetch(w, req, bytes));
    ++out.host_fetch_rounds;
    // The requests are grouped by record, in `again` order.
    uint64_t k = 0;
    for (uint32_t r : again)
      for (uint64_t g : mems[r].missing()) mems[r].add_granule(g, bytes.data() + (k++) * kGranuleBytes);
    pending = std::move(again);
  }

  std::vector<uint32_t> fds;
  for (uint32_t r = 0; r < uint32_t(gave.size() / 3); ++r)
    if (gave[3 * r] != ~0u) fds.insert(fds.end(), {rec[3 * r], gave[3 * r], gave[3 * r + 1], gave[3 * r + 2]});
  WW_TRY(install_fds(w, in, fds));

  std::vector<uint64_t> off(n);
  std::vector<uint32_t> len(n);
  uint64_t total = 0;
  for (uint32_t r = 0; r < n; ++r) {
    off[r] = total;
    len[r] = uint32_t(mems[r].patch_bytes());
    total += len[r];
  }
  std::vector<uint8_t> blob(std::max<uint64_t>(total, 1));
  for (uint32_t r = 0; r < n; ++r) mems[r].write_patches(blob.data() + off[r]);
  WW_TRY(ensure(d_patches_, patches_cap_, blob.size()));
  WW_CUDA(cudaMemcpy(d_patches_, blob.data(), blob.size(), cudaMemcpyHostToDevice));
  WW_CUDA(cudaMemcpy(d_patch_off_ + base, off.data(), n * sizeof(uint64_t), cudaMemcpyHostToDevice));
  WW_CUDA(cudaMemcpy(d_patch_bytes_ + base, len.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  WW_CUDA(cudaMemcpy(w.hc.io + base * width, io.data(), io.size() * 8, cudaMemcpyHostToDevice));
  WW_CUDA(cudaMemcpy(w.hc.trap + base, traps.data(), n, cudaMemcpyHostToDevice));
  WW_CUDA(cudaMemset(w.hc.count, 0, sizeof(unsigned long long)));
  WW_CUDA(cudaMemset(w.hc.frames_used, 0, sizeof(unsigned long long)));
  w.hc.patches = d_patches_;
  w.hc.out_base = base == 0 ? wave_ : 0;
  out.host_calls += n;
  ++out.host_passes;
  out.device_files = files_count_;
  out.device_file_bytes = files_bytes_;
  out.host_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

}  // namespace ww::gpu
