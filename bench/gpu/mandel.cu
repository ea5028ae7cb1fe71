// Native CUDA ceiling of benchmark (a): one thread per pixel, the same
// algos.h iteration and palette, the colour packed to RGBA8 exactly as
// wasmwarp's set_pixel does and stored to an image, the count to an array.
//   mandel_cuda [W [H]]      (default 3840 x 2160)
#include "algos.h"
#include "cuda_common.cuh"

__host__ __device__ static inline unsigned char to_byte(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 1.0f) return 255;
  return (unsigned char)(v * 255.0f + 0.5f);
}

__global__ void render(int w, int h, unsigned n, unsigned* image, int* iters) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= n) return;
  int x, y;
  mandel_pixel(id, 1, w, &x, &y);
  int it = mandel_iter(x, y, w, h);
  float r, g, b;
  mandel_color(it, &r, &g, &b);
  image[(size_t)y * w + x] = to_byte(r) | to_byte(g) << 8 | to_byte(b) << 16 | 255u << 24;
  iters[id] = it;
}

int main(int argc, char** argv) {
  int w = int(arg_u64(argc, argv, 1, 3840)), h = int(arg_u64(argc, argv, 2, 2160));
  if (w <= 0 || h <= 0 || (unsigned long long)w * h > (1ull << 31)) {
    std::fprintf(stderr, "bad image size\n");
    return 2;
  }
  unsigned n = unsigned(w) * unsigned(h);
  unsigned* image;
  int* iters;
  CK(cudaMalloc(&image, n * sizeof(unsigned)));
  CK(cudaMalloc(&iters, n * sizeof(int)));
  float ms = time_kernel([&] { render<<<(n + 255) / 256, 256>>>(w, h, n, image, iters); });
  std::vector<int> got(n);
  CK(cudaMemcpy(got.data(), iters, n * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned long long bad = 0;
  auto idx = sample_indices(n, 200000);
  for (auto i : idx) {
    int x, y;
    mandel_pixel(unsigned(i), 1, w, &x, &y);
    if (got[i] != mandel_iter(x, y, w, h)) ++bad;
  }
  return report("mandel", n, ms, idx.size(), bad);
}
