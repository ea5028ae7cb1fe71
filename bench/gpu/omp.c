/* The native C baseline of the GPU benchmarks: the same algos.h the guests
 * and the CUDA programs are built from, compiled by gcc -O2 with OpenMP and
 * run over every core of the host. Each instance does what a guest
 * instance does (a Mandelbrot pixel is also coloured and stored, a digest
 * is written out), so the rows compare like for like.
 *
 *   gpu_omp mandel W H                 one pixel per instance
 *   gpu_omp sha256 MSGS N              SHA-256 of N 64-byte messages
 *   gpu_omp montecarlo N SAMPLES       N option pricers
 *   gpu_omp collatz N BASE             N start values
 *
 * Prints "instances_per_second=R threads=T seconds=S": the median of five
 * timed runs after one warm-up run. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"

static uint64_t arg(int argc, char** argv, int i) {
  if (i >= argc) {
    fprintf(stderr, "usage: gpu_omp mandel W H | sha256 MSGS N | montecarlo N SAMPLES | collatz N BASE\n");
    exit(2);
  }
  return strtoull(argv[i], NULL, 0);
}

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "gpu_omp: cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* buf = malloc((size_t)n);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "gpu_omp: cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static uint8_t channel(float v) { return v <= 0.0f ? 0 : v >= 1.0f ? 255 : (uint8_t)(v * 255.0f + 0.5f); }

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc < 2) arg(argc, argv, 99);
  const char* what = argv[1];
  uint64_t n = 0;
  uint32_t* image = NULL;
  int32_t* counts = NULL;
  double* prices = NULL;
  uint8_t *msgs = NULL, *digests = NULL;
  uint64_t w = 0, h = 0, samples = 0, base = 0;
  if (!strcmp(what, "mandel")) {
    w = arg(argc, argv, 2);
    h = arg(argc, argv, 3);
    n = w * h;
    image = malloc(n * 4);
    counts = malloc(n * 4);
  } else if (!strcmp(what, "sha256")) {
    size_t size;
    msgs = read_file(argv[2], &size);
    n = arg(argc, argv, 3);
    if (size / 64 < n) {
      fprintf(stderr, "gpu_omp: %s holds fewer than %llu messages\n", argv[2], (unsigned long long)n);
      return 2;
    }
    digests = malloc(n * 32);
  } else if (!strcmp(what, "montecarlo")) {
    n = arg(argc, argv, 2);
    samples = arg(argc, argv, 3);
    prices = malloc(n * 8);
  } else if (!strcmp(what, "collatz")) {
    n = arg(argc, argv, 2);
    base = arg(argc, argv, 3);
    counts = malloc(n * 4);
  } else {
    arg(argc, argv, 99);
  }

  double times[5];
  for (int rep = -1; rep < 5; ++rep) {
    double t0 = omp_get_wtime();
    /* Dynamic schedule: instances differ in cost (Mandelbrot, Collatz). */
#pragma omp parallel for schedule(dynamic, 256)
    for (uint64_t i = 0; i < n; ++i) {
      if (image) {
        int x, y;
        mandel_pixel((bu32)i, 1, (bu32)w, &x, &y);
        int it = mandel_iter(x, y, (int)w, (int)h);
        float r, g, b;
        mandel_color(it, &r, &g, &b);
        counts[i] = it;
        image[(uint64_t)y * w + (uint64_t)x] =
            (uint32_t)channel(r) | (uint32_t)channel(g) << 8 | (uint32_t)channel(b) << 16 | 255u << 24;
      } else if (msgs) {
        sha256_64(msgs + 64 * i, digests + 32 * i);
      } else if (prices) {
        prices[i] = mc_price((bu32)i, (int)samples);
      } else {
        counts[i] = collatz_steps(base + (bu32)i);
      }
    }
    double t = omp_get_wtime() - t0;
    if (rep >= 0) times[rep] = t;
  }
  qsort(times, 5, sizeof times[0], cmp_double);
  /* Something of every result is used, so no loop is optimised away. */
  uint64_t sink = 0;
  for (uint64_t i = 0; i < n; i += 997) {
    if (counts) sink += (uint64_t)counts[i];
    if (digests) sink += digests[32 * i];
    if (prices) sink += (uint64_t)prices[i];
  }
  printf("%s: %llu instances, checksum %llu\n", what, (unsigned long long)n, (unsigned long long)sink);
  printf("instances_per_second=%.0f threads=%d seconds=%.6f\n", (double)n / times[2], omp_get_max_threads(), times[2]);
  return 0;
}
