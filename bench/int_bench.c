/* Integer benchmark: a sieve, a heap sort and an LZ77-style compressor with
 * a round-trip check. `run()` returns a checksum of every result; the same
 * file compiled natively (-DWW_NATIVE_MAIN) prints the expected value.
 * SCALE sets the number of rounds (bench default 4; the ctest uses 1). */
#include "ww_guest.h"

#ifndef SCALE
#define SCALE 4
#endif

#define SIEVE_N (1u << 21)
#define SORT_N (1u << 16)
#define TEXT_N (1u << 16)
#define HASH_BITS 12

static uint8_t flags[SIEVE_N];
static uint32_t arr[SORT_N];
static uint8_t text[TEXT_N];
static uint8_t packed[TEXT_N + TEXT_N / 64 + 16];
static uint8_t unpacked[TEXT_N];
static uint32_t table[1u << HASH_BITS];

static uint64_t sieve(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) flags[i] = 1;
  flags[0] = flags[1] = 0;
  for (uint32_t i = 2; (uint64_t)i * i < n; i++)
    if (flags[i])
      for (uint32_t j = i * i; j < n; j += i) flags[j] = 0;
  uint64_t count = 0, sum = 0;
  for (uint32_t i = 0; i < n; i++)
    if (flags[i]) {
      count++;
      sum += i;
    }
  return ww_mix(count, sum);
}

/* Iterative on purpose: wasmwarp's GPU backend will reject recursion. */
static void sift_down(uint32_t* a, uint32_t start, uint32_t end) {
  uint32_t root = start;
  while (2 * root + 1 < end) {
    uint32_t child = 2 * root + 1;
    if (child + 1 < end && a[child] < a[child + 1]) child++;
    if (a[root] >= a[child]) return;
    uint32_t t = a[root];
    a[root] = a[child];
    a[child] = t;
    root = child;
  }
}

static uint64_t heap_sort(uint64_t seed) {
  for (uint32_t i = 0; i < SORT_N; i++) arr[i] = (uint32_t)(ww_rand(&seed) >> 32);
  for (uint32_t i = SORT_N / 2; i-- > 0;) sift_down(arr, i, SORT_N);
  for (uint32_t end = SORT_N - 1; end > 0; end--) {
    uint32_t t = arr[0];
    arr[0] = arr[end];
    arr[end] = t;
    sift_down(arr, 0, end);
  }
  uint64_t h = 0;
  for (uint32_t i = 0; i < SORT_N; i++) {
    if (i && arr[i - 1] > arr[i]) return 0; /* unsorted: a wrong checksum */
    if ((i & 255) == 0) h = ww_mix(h, arr[i]);
  }
  return h;
}

/* Compressible input: words drawn from a small vocabulary. */
static void make_text(uint64_t seed) {
  static const char* words[] = {"warp ",   "lane ",   "thread ", "block ", "memory ",  "global ",
                                "shared ", "module ", "stack ",  "table ", "i32.add ", "br_if "};
  uint32_t n = 0;
  while (n < TEXT_N) {
    const char* w = words[ww_rand(&seed) % 12];
    while (*w && n < TEXT_N) text[n++] = (uint8_t)*w++;
  }
}

/* Format: a control byte c; c < 128: c+1 literals follow; c >= 128: a match
 * of length (c - 128) + 4 at a 16-bit little-endian distance. */
static uint32_t lz_compress(const uint8_t* in, uint32_t n, uint8_t* out) {
  for (uint32_t i = 0; i < (1u << HASH_BITS); i++) table[i] = 0xFFFFFFFFu;
  uint32_t ip = 0, op = 0, lit_start = 0;
  while (ip + 4 <= n) {
    uint32_t v = in[ip] | in[ip + 1] << 8 | in[ip + 2] << 16 | (uint32_t)in[ip + 3] << 24;
    uint32_t h = (v * 2654435761u) >> (32 - HASH_BITS);
    uint32_t cand = table[h];
    table[h] = ip;
    uint32_t len = 0;
    if (cand != 0xFFFFFFFFu && ip - cand <= 65535) {
      while (ip + len < n && len < 127 + 4 && in[cand + len] == in[ip + len]) len++;
    }
    if (len < 4) {
      ip++;
      continue;
    }
    while (lit_start < ip) {
      uint32_t run = ip - lit_start > 128 ? 128 : ip - lit_start;
      out[op++] = (uint8_t)(run - 1);
      for (uint32_t k = 0; k < run; k++) out[op++] = in[lit_start + k];
      lit_start += run;
    }
    uint32_t dist = ip - cand;
    out[op++] = (uint8_t)(128 + len - 4);
    out[op++] = (uint8_t)dist;
    out[op++] = (uint8_t)(dist >> 8);
    ip += len;
    lit_start = ip;
  }
  while (lit_start < n) {
    uint32_t run = n - lit_start > 128 ? 128 : n - lit_start;
    out[op++] = (uint8_t)(run - 1);
    for (uint32_t k = 0; k < run; k++) out[op++] = in[lit_start + k];
    lit_start += run;
  }
  return op;
}

static uint32_t lz_decompress(const uint8_t* in, uint32_t n, uint8_t* out, uint32_t cap) {
  uint32_t ip = 0, op = 0;
  while (ip < n) {
    uint32_t c = in[ip++];
    if (c < 128) {
      for (uint32_t k = 0; k <= c; k++) {
        if (op >= cap) return 0;
        out[op++] = in[ip++];
      }
    } else {
      uint32_t len = c - 128 + 4;
      uint32_t dist = in[ip] | in[ip + 1] << 8;
      ip += 2;
      if (dist == 0 || dist > op || op + len > cap) return 0;
      for (uint32_t k = 0; k < len; k++, op++) out[op] = out[op - dist];
    }
  }
  return op;
}

static uint64_t lz_round(uint64_t seed) {
  make_text(seed);
  uint32_t clen = lz_compress(text, TEXT_N, packed);
  uint32_t dlen = lz_decompress(packed, clen, unpacked, TEXT_N);
  uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a over the round trip */
  for (uint32_t i = 0; i < dlen; i++) h = (h ^ unpacked[i]) * 0x100000001B3ULL;
  for (uint32_t i = 0; i < TEXT_N; i++)
    if (unpacked[i] != text[i]) return 1; /* round trip broke */
  return ww_mix(ww_mix(h, clen), dlen);
}

WW_EXPORT("run") int64_t run(void) {
  uint64_t h = 0;
  for (uint32_t r = 0; r < SCALE; r++) {
    h = ww_mix(h, sieve(SIEVE_N - r * 1000));
    h = ww_mix(h, heap_sort(0x1234567ULL + r));
    for (uint32_t k = 0; k < 4; k++) h = ww_mix(h, lz_round(0xABCDEFULL + r * 16 + k));
  }
  /* Positive, so every tool prints it the same way. */
  return (int64_t)(h & 0x7FFFFFFFFFFFFFFFULL);
}

#ifdef WW_NATIVE_MAIN
#include <stdio.h>
int main(void) {
  printf("%lld\n", (long long)run());
  return 0;
}
#endif
