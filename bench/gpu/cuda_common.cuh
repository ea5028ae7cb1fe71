// Shared by the native CUDA ceilings: error checks, kernel timing and the
// one output line run.sh parses. Kernels are timed alone with cudaEvents
// (after a warm-up launch, median of several), so the figure is the
// device's best case: no upload, download or setup, unlike wasmwarp's rate.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                                  \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)

inline unsigned long long arg_u64(int argc, char** argv, int i, unsigned long long def) {
  if (argc <= i) return def;
  char* end;
  unsigned long long v = std::strtoull(argv[i], &end, 0);
  if (!*argv[i] || *end) {
    std::fprintf(stderr, "bad number '%s'\n", argv[i]);
    std::exit(2);
  }
  return v;
}

// Median kernel time in ms of `runs` launches after `warmup` untimed ones.
template <class Launch>
float time_kernel(Launch launch, int warmup = 2, int runs = 7) {
  for (int i = 0; i < warmup; ++i) launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Prints the result line; returns the exit code (1 if the check failed).
inline int report(const char* name, unsigned long long n, float ms, unsigned long long checked,
                  unsigned long long bad) {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s: %llu instances on %s, kernel median %.3f ms\n", name, n, p.name, ms);
  if (bad) {
    std::printf("FAIL %s: %llu of %llu sampled instances differ from the CPU reference\n", name, bad, checked);
  } else {
    std::printf("ok %s: %llu sampled instances match the CPU reference\n", name, checked);
  }
  std::printf("instances_per_second=%.1f\n", ms > 0 ? double(n) / (ms / 1000.0) : 0.0);
  return bad ? 1 : 0;
}

// Instance indices to check on the CPU: the first and last few, then an
// even spread (at most about `count`).
inline std::vector<unsigned long long> sample_indices(unsigned long long n, unsigned long long count) {
  std::vector<unsigned long long> v;
  if (n <= count) {
    for (unsigned long long i = 0; i < n; ++i) v.push_back(i);
    return v;
  }
  for (unsigned long long i = 0; i < 16; ++i) v.push_back(i), v.push_back(n - 1 - i);
  unsigned long long stride = n / count;
  for (unsigned long long i = 16; i < n - 16; i += stride) v.push_back(i);
  return v;
}
