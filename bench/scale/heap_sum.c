/* A C module whose heap outgrows what the GPU reserves for an instance at
 * first (its initial memory plus 16 pages): each instance mallocs n words
 * (4 MB for a million), fills them from its seed and sums them; its memory
 * grows past the reservation, and the instance runs again with more.
 *   clang --target=wasm32-wasi -O2 -mexec-model=reactor heap_sum.c
 *   cc -O2 -DNATIVE_MAIN heap_sum.c   (prints heap_sum(n, i) for i < count, one per line) */
#include <stdint.h>
#include <stdlib.h>

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#else
#define EXPORT(name)
#endif

EXPORT("heap_sum") int64_t heap_sum(uint32_t n, uint32_t seed) {
  uint32_t* a = malloc((size_t)n * sizeof *a);
  if (!a) return -1;
  for (uint32_t k = 0; k < n; ++k) a[k] = (k + seed * 40503u) * 2654435761u;
  int64_t sum = 0;
  for (uint32_t k = 0; k < n; k += 7) sum += a[k] >> 3;
  free(a);
  return sum;
}

#ifdef NATIVE_MAIN
#include <stdio.h>
/* heap_sum N COUNT */
int main(int argc, char** argv) {
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], 0, 10) : 1000000;
  uint32_t count = argc > 2 ? (uint32_t)strtoul(argv[2], 0, 10) : 4;
  for (uint32_t i = 0; i < count; ++i) printf("%lld\n", (long long)heap_sum(n, i));
  return 0;
}
#endif
