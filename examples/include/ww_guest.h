/* Freestanding support for wasmwarp guest programs built with
 * `clang --target=wasm32 -nostdlib`: no libc, no imports, so the same
 * module runs in wasmwarp, wabt's wasm-interp and node unchanged. The same
 * source also compiles natively (the benchmarks check wasm against it). */
#ifndef WW_GUEST_H
#define WW_GUEST_H

#include <stddef.h>
#include <stdint.h>

#if defined(__wasm__)
#ifndef WW_EXPORT /* the same definition as sdk/c/wasmwarp.h */
#define WW_EXPORT(name) __attribute__((export_name(name)))
#endif
/* clang -O2 turns copy and fill loops into calls to these even with
 * -nostdlib, so a module without libc must define them. They are written
 * byte-wise on purpose: the loop-idiom pass would otherwise turn the body
 * back into a call to itself. */
__attribute__((weak)) void* memset(void* d, int c, size_t n) {
  volatile unsigned char* p = (volatile unsigned char*)d;
  while (n--) *p++ = (unsigned char)c;
  return d;
}
__attribute__((weak)) void* memcpy(void* d, const void* s, size_t n) {
  volatile unsigned char* p = (volatile unsigned char*)d;
  const unsigned char* q = (const unsigned char*)s;
  while (n--) *p++ = *q++;
  return d;
}
__attribute__((weak)) void* memmove(void* d, const void* s, size_t n) {
  volatile unsigned char* p = (volatile unsigned char*)d;
  const unsigned char* q = (const unsigned char*)s;
  if (p < q) {
    while (n--) *p++ = *q++;
  } else {
    p += n;
    q += n;
    while (n--) *--p = *--q;
  }
  return d;
}
static inline double ww_sqrt(double x) { return __builtin_sqrt(x); }
#else
#include <math.h>
#include <string.h>
#undef WW_EXPORT
#define WW_EXPORT(name)
static inline double ww_sqrt(double x) { return sqrt(x); }
#endif

/* Deterministic PRNG (xorshift64*): identical sequences on every target. */
static inline uint64_t ww_rand(uint64_t* s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* Folds a value into a checksum; order-sensitive so a wrong order shows. */
static inline uint64_t ww_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDULL;
}

static inline uint64_t ww_f64_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

#endif
