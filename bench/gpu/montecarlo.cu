// Native CUDA ceiling of benchmark (c): one thread per instance, the same
// algos.h f64 option pricer; results must equal the CPU's bit for bit
// (built with --fmad=false, like the guest's wasm which has no FMA).
//   montecarlo_cuda [N [SAMPLES]]     (default 1048576 x 256)
#include <cstring>

#include "algos.h"
#include "cuda_common.cuh"

__global__ void price(unsigned n, int samples, double* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mc_price(i, samples);
}

int main(int argc, char** argv) {
  unsigned long long n = arg_u64(argc, argv, 1, 1048576);
  unsigned long long samples = arg_u64(argc, argv, 2, 256);
  if (n == 0 || n > (1ull << 31) || samples == 0 || samples > 0x7fffffff) {
    std::fprintf(stderr, "bad N or SAMPLES\n");
    return 2;
  }
  double* out;
  CK(cudaMalloc(&out, n * sizeof(double)));
  float ms = time_kernel([&] { price<<<unsigned((n + 255) / 256), 256>>>(unsigned(n), int(samples), out); });
  std::vector<double> got(n);
  CK(cudaMemcpy(got.data(), out, n * sizeof(double), cudaMemcpyDeviceToHost));
  unsigned long long bad = 0;
  auto idx = sample_indices(n, 20000);
  for (auto i : idx) {
    double want = mc_price(unsigned(i), int(samples));
    if (std::memcmp(&want, &got[i], sizeof want) != 0) ++bad;
  }
  return report("montecarlo", n, ms, idx.size(), bad);
}
