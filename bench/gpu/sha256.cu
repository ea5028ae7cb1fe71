// Native CUDA ceiling of benchmark (b): one thread per 64-byte message, the
// same algos.h SHA-256, messages generated exactly like messages.bin.
//   sha256_cuda [N]          (default 1000000)
#include "algos.h"
#include "cuda_common.cuh"

__global__ void gen(unsigned long long n, bu8* msgs) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) sha_message(i, msgs + 64 * i);
}

__global__ void hash(unsigned long long n, const bu8* msgs, bu8* digests) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) sha256_64(msgs + 64 * i, digests + 32 * i);
}

int main(int argc, char** argv) {
  unsigned long long n = arg_u64(argc, argv, 1, 1000000);
  if (n == 0 || n > (1ull << 28)) {
    std::fprintf(stderr, "bad N\n");
    return 2;
  }
  bu8 *msgs, *digests;
  CK(cudaMalloc(&msgs, n * 64));
  CK(cudaMalloc(&digests, n * 32));
  unsigned blocks = unsigned((n + 255) / 256);
  gen<<<blocks, 256>>>(n, msgs);
  CK(cudaGetLastError());
  float ms = time_kernel([&] { hash<<<blocks, 256>>>(n, msgs, digests); });
  std::vector<bu8> got(n * 32);
  CK(cudaMemcpy(got.data(), digests, n * 32, cudaMemcpyDeviceToHost));
  unsigned long long bad = 0;
  auto idx = sample_indices(n, 200000);
  for (auto i : idx) {
    bu8 m[64], d[32];
    sha_message(i, m);
    sha256_64(m, d);
    for (int k = 0; k < 32; ++k)
      if (d[k] != got[i * 32 + k]) {
        ++bad;
        break;
      }
  }
  return report("sha256", n, ms, idx.size(), bad);
}
