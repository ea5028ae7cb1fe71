// Native CUDA ceiling of benchmark (d): one thread per start value, the
// same algos.h Collatz loop, warps diverging on the data.
//   collatz_cuda [N [BASE]]      (default 4194304, 1000000000000)
#include "algos.h"
#include "cuda_common.cuh"

__global__ void steps(unsigned n, unsigned long long base, int* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = collatz_steps(base + i);
}

int main(int argc, char** argv) {
  unsigned long long n = arg_u64(argc, argv, 1, 4194304);
  unsigned long long base = arg_u64(argc, argv, 2, 1000000000000ull);
  if (n == 0 || n > (1ull << 31)) {
    std::fprintf(stderr, "bad N\n");
    return 2;
  }
  int* out;
  CK(cudaMalloc(&out, n * sizeof(int)));
  float ms = time_kernel([&] { steps<<<unsigned((n + 255) / 256), 256>>>(unsigned(n), base, out); });
  std::vector<int> got(n);
  CK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned long long bad = 0;
  auto idx = sample_indices(n, 200000);
  for (auto i : idx)
    if (got[i] != collatz_steps(base + i)) ++bad;
  return report("collatz", n, ms, idx.size(), bad);
}
