// What a batch's columns can cross at through pinned staging pieces, by the
// way the pieces are used: piece size, how many pieces in the ring, cached
// or streaming (non-temporal) stores into them, and how many host threads
// copy. wasmwarp's uploads ran at 32-35 GB/s and its downloads at about
// 22 GB/s through two 4 MiB pieces, against 55 GB/s for the DMA alone; this
// says which of the host's copy and the DMA bounds that, and what a
// different use of the pieces would give.
//   nvcc -O2 -std=c++17 staging_pipeline.cu -o staging_pipeline && ./staging_pipeline [MiB [grid|ring]]
#include <cuda_runtime.h>
#include <emmintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Spinning workers, as wasmwarp's host workers spin between pieces.
class Pool {
 public:
  explicit Pool(int n) : n_(n) {
    for (int i = 1; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
  }
  ~Pool() {
    stop_ = true;
    gen_.fetch_add(1);
    for (auto& t : threads_) t.join();
  }
  int size() const { return n_; }
  // fn(i) for i < used on `used` threads (the caller is thread 0).
  void run(int used, const std::function<void(int)>& fn) {
    fn_ = &fn;
    used_ = used;
    left_.store(used - 1);
    gen_.fetch_add(1, std::memory_order_release);
    fn(0);
    while (left_.load(std::memory_order_acquire) != 0) _mm_pause();
  }

 private:
  void loop(int i) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g;
      while ((g = gen_.load(std::memory_order_acquire)) == seen) _mm_pause();
      seen = g;
      if (stop_) return;
      if (i < used_) {
        (*fn_)(i);
        left_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }
  int n_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<int> left_{0};
  const std::function<void(int)>* fn_ = nullptr;
  int used_ = 0;
  std::atomic<bool> stop_{false};
};

static void copy_nt(uint8_t* d, const uint8_t* s, size_t len) {
  size_t i = 0;
  for (; i + 64 <= len; i += 64)
    for (size_t k = 0; k < 64; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k)));
  std::memcpy(d + i, s + i, len - i);
  _mm_sfence();
}

static void par_copy(Pool& pool, int threads, uint8_t* d, const uint8_t* s, size_t len, bool nt) {
  const size_t per = ((len + threads - 1) / threads + 4095) & ~size_t{4095};
  pool.run(threads, [&](int j) {
    const size_t off = size_t(j) * per;
    if (off >= len) return;
    const size_t n = std::min(per, len - off);
    if (nt) copy_nt(d + off, s + off, n);
    else std::memcpy(d + off, s + off, n);
  });
}

static uint8_t* huge_alloc(size_t bytes) {
  const size_t huge = size_t(2) << 20;
  void* p = std::aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
  if (!p) std::exit(1);
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  return static_cast<uint8_t*>(p);
}

struct Ring {
  std::vector<uint8_t*> buf;
  std::vector<cudaEvent_t> ev;
  Ring(int k, size_t piece) : buf(k), ev(k) {
    for (int i = 0; i < k; ++i) {
      CHECK(cudaHostAlloc(reinterpret_cast<void**>(&buf[i]), piece, cudaHostAllocDefault));
      CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
      std::memset(buf[i], 1, piece);
    }
  }
  ~Ring() {
    for (size_t i = 0; i < buf.size(); ++i) {
      cudaFreeHost(buf[i]);
      cudaEventDestroy(ev[i]);
    }
  }
};

// host -> pieces -> device; copy == false leaves the host's copy out (the
// DMA alone), dma == false the DMA (the host's copy alone).
static double h2d(Pool& pool, int threads, Ring& r, size_t piece, uint8_t* dev, const uint8_t* src, size_t total,
                  bool nt, bool copy, bool dma, cudaStream_t st) {
  const size_t pieces = (total + piece - 1) / piece;
  const int k = int(r.buf.size());
  auto t = Clock::now();
  for (size_t p = 0; p < pieces; ++p) {
    const int slot = int(p % k);
    const size_t len = std::min(piece, total - p * piece);
    CHECK(cudaEventSynchronize(r.ev[slot]));
    if (copy) par_copy(pool, threads, r.buf[slot], src + p * piece, len, nt);
    if (dma) CHECK(cudaMemcpyAsync(dev + p * piece, r.buf[slot], len, cudaMemcpyHostToDevice, st));
    CHECK(cudaEventRecord(r.ev[slot], st));
  }
  CHECK(cudaStreamSynchronize(st));
  return total / (ms_since(t) * 1e6);
}

static double d2h(Pool& pool, int threads, Ring& r, size_t piece, uint8_t* dst, const uint8_t* dev, size_t total,
                  bool nt, bool copy, bool dma, cudaStream_t st) {
  const size_t pieces = (total + piece - 1) / piece;
  const int k = int(r.buf.size());
  auto t = Clock::now();
  auto enqueue = [&](size_t p) {
    const int slot = int(p % k);
    if (dma)
      CHECK(cudaMemcpyAsync(r.buf[slot], dev + p * piece, std::min(piece, total - p * piece), cudaMemcpyDeviceToHost,
                            st));
    CHECK(cudaEventRecord(r.ev[slot], st));
  };
  for (size_t p = 0; p < pieces && p < size_t(k); ++p) enqueue(p);
  for (size_t p = 0; p < pieces; ++p) {
    const int slot = int(p % k);
    CHECK(cudaEventSynchronize(r.ev[slot]));
    if (copy) par_copy(pool, threads, dst + p * piece, r.buf[slot], std::min(piece, total - p * piece), nt);
    if (p + k < pieces) enqueue(p + k);
  }
  CHECK(cudaStreamSynchronize(st));
  return total / (ms_since(t) * 1e6);
}

int main(int argc, char** argv) {
  const size_t total = size_t(argc > 1 ? std::atol(argv[1]) : 1024) << 20;
  CHECK(cudaFree(nullptr));
  {
    FILE* f = std::fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && std::fgets(line, sizeof line, f))
      if (!std::strncmp(line, "model name", 10)) {
        std::printf("host: %s", std::strchr(line, ':') + 2);
        break;
      }
    if (f) std::fclose(f);
    std::printf("host threads: %u, total %zu MiB\n", std::thread::hardware_concurrency(), total >> 20);
  }
  const int hw = int(std::thread::hardware_concurrency());
  Pool pool(hw);
  uint8_t* host = huge_alloc(total);
  std::memset(host, 3, total);
  uint8_t* dev = nullptr;
  CHECK(cudaMalloc(&dev, total));
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  // Median of 5: the machine's copies vary from run to run.
  auto median = [](auto&& f) {
    std::vector<double> v;
    for (int i = 0; i < 5; ++i) v.push_back(f());
    std::sort(v.begin(), v.end());
    return v[2];
  };
  // "grid" (default): every combination, both kinds of stores. "ring": the
  // stores each way that the grid found faster (cached into the pieces
  // for h2d, streaming out of them for d2h), more ring depths.
  const bool ring_mode = argc > 2 && !std::strcmp(argv[2], "ring");
  const std::vector<size_t> piece_list =
      ring_mode ? std::vector<size_t>{2048, 4096, 8192, 16384} : std::vector<size_t>{256, 1024, 4096, 16384};
  const std::vector<int> ring_list = ring_mode ? std::vector<int>{2, 3, 4, 6, 8} : std::vector<int>{2, 4};
  std::printf("%-4s %8s %5s %6s %8s | %9s %9s %9s  GB/s (median of 5)\n", "dir", "piece", "ring", "stores", "threads",
              "pipeline", "dma only", "copy only");
  for (const char* dir : {"h2d", "d2h"})
    for (size_t piece_kib : piece_list)
      for (int ring : ring_list)
        for (int nt = 0; nt < 2; ++nt)
          for (int threads : {hw / 2, hw}) {
            if (ring_mode && nt != (dir[0] == 'd')) continue;
            const size_t piece = piece_kib << 10;
            Ring r(ring, piece);
            auto go = [&](bool copy, bool dma) {
              return median([&] {
                return dir[0] == 'h' ? h2d(pool, threads, r, piece, dev, host, total, nt, copy, dma, st)
                                     : d2h(pool, threads, r, piece, host, dev, total, nt, copy, dma, st);
              });
            };
            const double both = go(true, true), dma = go(false, true), copy = go(true, false);
            std::printf("%-4s %6zuKi %5d %6s %8d | %9.1f %9.1f %9.1f\n", dir, piece_kib, ring, nt ? "nt" : "cached",
                        threads, both, dma, copy);
            std::fflush(stdout);
          }
  // A fresh destination, as a batch's result columns are: its huge pages are
  // faulted in (and zeroed by the kernel) by the copy itself.
  for (int nt = 0; nt < 2; ++nt) {
    const size_t piece = size_t(4) << 20;
    Ring r(2, piece);
    for (int rep = 0; rep < 3; ++rep) {
      uint8_t* fresh = huge_alloc(total);
      const double g = d2h(pool, hw, r, piece, fresh, dev, total, nt, true, true, st);
      std::free(fresh);
      std::printf("d2h into a fresh destination, 4 MiB x 2, %s, %d threads: %.1f GB/s\n", nt ? "nt" : "cached", hw, g);
    }
  }
  // What zeroing fresh columns on every core costs (a batch's result
  // columns start that way): the page faults, not the stores.
  for (int rep = 0; rep < 3; ++rep) {
    uint8_t* fresh = huge_alloc(total);
    auto t = Clock::now();
    const size_t per = ((total + hw - 1) / hw + 4095) & ~size_t{4095};
    pool.run(hw, [&](int j) {
      const size_t off = size_t(j) * per;
      if (off < total) std::memset(fresh + off, 0, std::min(per, total - off));
    });
    const double fault = total / (ms_since(t) * 1e6);
    t = Clock::now();
    pool.run(hw, [&](int j) {
      const size_t off = size_t(j) * per;
      if (off < total) std::memset(fresh + off, 0, std::min(per, total - off));
    });
    std::printf("zeroing %zu MiB on %d threads: fresh %.1f GB/s, again %.1f GB/s\n", total >> 20, hw, fault,
                total / (ms_since(t) * 1e6));
    std::free(fresh);
  }
  return 0;
}
