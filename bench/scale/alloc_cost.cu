// How long cudaMalloc + cudaFree of a buffer take by size on this GPU, and
// pinning host memory: what the sparse pool's size costs a batch's memory
// set-up. Then the host-device bandwidth the issue's "kernel plus
// transfers" target is measured against: pinned and pageable copies both
// ways, by size. nvcc -O2 alloc_cost.cu -o alloc_cost && ./alloc_cost
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

static double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int main() {
  cudaFree(nullptr);
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  std::printf("free %.1f GiB of %.1f GiB\n", free_b / 1073741824.0, total_b / 1073741824.0);
  for (double gib : {0.25, 1.0, 4.0, 16.0, 32.0, 64.0, 128.0}) {
    const size_t bytes = size_t(gib * 1073741824.0);
    if (bytes > free_b - (1ull << 30)) continue;
    for (int rep = 0; rep < 2; ++rep) {
      void* p = nullptr;
      auto t = std::chrono::steady_clock::now();
      if (cudaMalloc(&p, bytes) != cudaSuccess) {
        std::printf("%.2f GiB: cudaMalloc failed\n", gib);
        break;
      }
      cudaDeviceSynchronize();
      const double a = ms_since(t);
      t = std::chrono::steady_clock::now();
      cudaMemset(p, 0, bytes);
      cudaDeviceSynchronize();
      const double m = ms_since(t);
      t = std::chrono::steady_clock::now();
      cudaFree(p);
      const double f = ms_since(t);
      std::printf("%7.2f GiB: malloc %7.2f ms  memset %7.2f ms  free %7.2f ms\n", gib, a, m, f);
    }
  }
  for (size_t mib : {16, 64, 256, 1024}) {
    void* h = nullptr;
    auto t = std::chrono::steady_clock::now();
    cudaHostAlloc(&h, mib << 20, cudaHostAllocDefault);
    const double a = ms_since(t);
    t = std::chrono::steady_clock::now();
    cudaFreeHost(h);
    std::printf("pinned %5zu MiB: alloc %7.2f ms  free %7.2f ms\n", mib, a, ms_since(t));
  }
  // Pinning by way, 32 MiB: cudaHostAlloc against memory of our own,
  // touched first, then registered; with transparent huge pages asked for,
  // the driver may pin 2 MiB pages instead of 512 times as many 4 KiB ones.
  {
    const size_t bytes = size_t(32) << 20;
    FILE* thp = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "unknown";
    if (thp) {
      if (!std::fgets(mode, sizeof mode, thp)) std::strcpy(mode, "unreadable");
      std::fclose(thp);
    }
    std::printf("transparent huge pages: %s", mode);
    for (int way = 0; way < 3; ++way) {
      for (int rep = 0; rep < 2; ++rep) {
        void* h = nullptr;
        double touch = 0, reg = 0;
        auto t = std::chrono::steady_clock::now();
        if (way == 0) {
          cudaHostAlloc(&h, bytes, cudaHostAllocDefault);
          reg = ms_since(t);
        } else {
          h = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          if (way == 2) madvise(h, bytes, MADV_HUGEPAGE);
          std::memset(h, 0, bytes);
          touch = ms_since(t);
          t = std::chrono::steady_clock::now();
          if (cudaHostRegister(h, bytes, cudaHostRegisterDefault) != cudaSuccess) std::printf("register failed\n");
          reg = ms_since(t);
        }
        void* d = nullptr;
        cudaMalloc(&d, bytes);
        double best = 1e30;
        for (int k = 0; k < 6; ++k) {
          auto c = std::chrono::steady_clock::now();
          cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
          if (k > 0) best = std::min(best, ms_since(c));
        }
        cudaFree(d);
        t = std::chrono::steady_clock::now();
        if (way == 0) {
          cudaFreeHost(h);
        } else {
          cudaHostUnregister(h);
          munmap(h, bytes);
        }
        const char* name[] = {"cudaHostAlloc", "mmap + touch + register", "mmap + MADV_HUGEPAGE + touch + register"};
        std::printf("pin 32 MiB by %s: touch %6.2f ms  pin %6.2f ms  free %6.2f ms  D2H %5.1f GB/s\n", name[way], touch,
                    reg, ms_since(t), double(bytes) / (best * 1e6));
      }
    }
  }
  // Bandwidth: the best of 5 copies of each size, after one untimed.
  const size_t big = size_t(256) << 20;
  void *pinned = nullptr, *dev = nullptr;
  cudaHostAlloc(&pinned, big, cudaHostAllocDefault);
  cudaMalloc(&dev, big);
  char* pageable = new char[big];
  for (size_t i = 0; i < big; i += 4096) pageable[i] = 1;
  auto best_gbs = [&](void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    double best = 1e30;
    for (int rep = 0; rep < 6; ++rep) {
      auto t = std::chrono::steady_clock::now();
      cudaMemcpy(dst, src, bytes, kind);
      const double ms = ms_since(t);
      if (rep > 0 && ms < best) best = ms;
    }
    return double(bytes) / (best * 1e6);
  };
  for (size_t mib : {4, 32, 256}) {
    const size_t b = mib << 20;
    std::printf("copy %4zu MiB: pinned H2D %5.1f GB/s  D2H %5.1f GB/s   pageable H2D %5.1f GB/s  D2H %5.1f GB/s\n", mib,
                best_gbs(dev, pinned, b, cudaMemcpyHostToDevice), best_gbs(pinned, dev, b, cudaMemcpyDeviceToHost),
                best_gbs(dev, pageable, b, cudaMemcpyHostToDevice), best_gbs(pageable, dev, b, cudaMemcpyDeviceToHost));
  }
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t = std::chrono::steady_clock::now();
    std::memcpy(pageable, pinned, big);
    best = std::min(best, ms_since(t));
  }
  std::printf("host memcpy, one thread: %.1f GB/s\n", double(big) / (best * 1e6));
  delete[] pageable;
  cudaFreeHost(pinned);
  cudaFree(dev);
  return 0;
}
