// Loops that clang vectorises for wasm32 with -msimd128 -O3 (the build
// checks that the module holds v128 instructions), and whose answers do
// not depend on the order of floating-point operations, so the same
// source compiled natively gives the reference. `seed` is the instance's
// index: each instance works on its own data.
#include <stdint.h>

#define N 1024

static uint32_t next(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u;
  return *s;
}

static uint32_t mix(uint32_t h, uint32_t v) {
  h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
  return h;
}

static int32_t a[N], b[N];
static float x[N], y[N];
static uint8_t bytes[4 * N];
static uint32_t counts[256];

// A dot product of i32 vectors (wrapping).
int32_t dot(int32_t seed) {
  uint32_t s = (uint32_t)seed;
  for (int i = 0; i < N; ++i) {
    a[i] = (int32_t)next(&s) >> 8;
    b[i] = (int32_t)(next(&s) & 0xffff) - 0x8000;
  }
  int32_t sum = 0;
  for (int i = 0; i < N; ++i) sum += a[i] * b[i];
  return sum;
}

// y = alpha * x + y, element by element; the answer hashes y's bits.
uint32_t saxpy(int32_t seed) {
  uint32_t s = (uint32_t)seed + 7u;
  const float alpha = 1.0f + (float)(seed % 13) / 8.0f;
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(int32_t)(next(&s) >> 9) / 1024.0f;
    y[i] = (float)(int32_t)(next(&s) >> 10) / 4096.0f;
  }
  for (int i = 0; i < N; ++i) y[i] = alpha * x[i] + y[i];
  uint32_t h = 0;
  for (int i = 0; i < N; ++i) {
    union {
      float f;
      uint32_t u;
    } c = {y[i]};
    h = mix(h, c.u);
  }
  return h;
}

// A byte histogram; the answer hashes the counts.
uint32_t histogram(int32_t seed) {
  uint32_t s = (uint32_t)seed * 3u + 1u;
  for (int i = 0; i < 4 * N; ++i) bytes[i] = (uint8_t)(next(&s) >> 13);
  for (int i = 0; i < 256; ++i) counts[i] = 0;
  for (int i = 0; i < 4 * N; ++i) counts[bytes[i]]++;
  uint32_t h = 0;
  for (int i = 0; i < 256; ++i) h = mix(h, counts[i]);
  return h;
}

// Saturating u8 brightening, element-wise: clang turns it into
// i8x16.add_sat_u; the answer hashes the bytes.
uint32_t brighten(int32_t seed) {
  uint32_t s = (uint32_t)seed + 99u;
  for (int i = 0; i < 4 * N; ++i) bytes[i] = (uint8_t)(next(&s) >> 11);
  const uint8_t k = (uint8_t)(40 + seed % 100);
  for (int i = 0; i < 4 * N; ++i) {
    const unsigned v = bytes[i] + k;
    bytes[i] = (uint8_t)(v > 255 ? 255 : v);
  }
  uint32_t h = 0;
  for (int i = 0; i < 4 * N; i += 4)
    h = mix(h, (uint32_t)bytes[i] | (uint32_t)bytes[i + 1] << 8 | (uint32_t)bytes[i + 2] << 16 |
                   (uint32_t)bytes[i + 3] << 24);
  return h;
}

#ifdef NATIVE_MAIN
#include <stdio.h>
#include <stdlib.h>
// Prints the answers of instances first..first+n-1 of one kernel, one per
// line. Built natively (the reference) and for wasm32-wasi (a SIMD module
// whose WASI calls run beside its v128 code).
int main(int argc, char** argv) {
  const char* k = argc > 1 ? argv[1] : "dot";
  const int n = argc > 2 ? atoi(argv[2]) : 16;
  const int first = argc > 3 ? atoi(argv[3]) : 0;
  for (int i = first; i < first + n; ++i) {
    if (k[0] == 'd') printf("%d\n", dot(i));
    else if (k[0] == 's') printf("%d\n", (int32_t)saxpy(i));
    else if (k[0] == 'h') printf("%d\n", (int32_t)histogram(i));
    else printf("%d\n", (int32_t)brighten(i));
  }
  return 0;
}
#endif
