/* A batch of hash jobs: instance i hashes its own input buffer.
 *
 * `hash_seed(seed)` fills INPUT_SIZE bytes from a PRNG seeded with `seed`
 * and returns their 64-bit FNV-1a/xorshift digest, so a batch needs no input
 * files:  wasmwarp run --invoke hash_seed -n 10000 hash.wasm @index
 * `hash_input(len)` digests the first `len` bytes of the exported `input`
 * buffer, for batches that load per-instance data into memory (--mem-in).
 * Results are kept positive so every tool prints them alike. */
#include "ww_guest.h"

#define INPUT_SIZE 65536

static uint8_t input[INPUT_SIZE];

WW_EXPORT("input") uint32_t input_addr(void) { return (uint32_t)(uintptr_t)input; }

static uint64_t digest(const uint8_t* p, uint32_t n) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (uint32_t i = 0; i < n; i++) {
    h = (h ^ p[i]) * 0x100000001B3ULL;
    h ^= h >> 29;
  }
  return ww_mix(h, n) & 0x7FFFFFFFFFFFFFFFULL;
}

WW_EXPORT("hash_input") int64_t hash_input(int32_t len) {
  if (len < 0 || len > INPUT_SIZE) return -1;
  return (int64_t)digest(input, (uint32_t)len);
}

WW_EXPORT("hash_seed") int64_t hash_seed(int32_t seed) {
  uint64_t s = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uint32_t)seed;
  for (uint32_t i = 0; i < INPUT_SIZE; i += 8) {
    uint64_t r = ww_rand(&s);
    for (uint32_t k = 0; k < 8; k++) input[i + k] = (uint8_t)(r >> (8 * k));
  }
  return (int64_t)digest(input, INPUT_SIZE);
}

#ifdef WW_NATIVE_MAIN
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* "hash.native FIRST COUNT" prints hash_seed(i) for each i in
 * [FIRST, FIRST+COUNT), one per line; "hash.native inputs FIRST COUNT"
 * writes those instances' input buffers to stdout instead, as a --mem-in
 * file for hash_input. */
int main(int argc, char** argv) {
  int dump = argc > 1 && strcmp(argv[1], "inputs") == 0;
  int first = argc > 1 + dump ? atoi(argv[1 + dump]) : 0;
  int count = argc > 2 + dump ? atoi(argv[2 + dump]) : 16;
  for (int i = first; i < first + count; i++) {
    long long h = (long long)hash_seed(i);
    if (dump) fwrite(input, 1, INPUT_SIZE, stdout);
    else printf("%lld\n", h);
  }
  return 0;
}
#endif
