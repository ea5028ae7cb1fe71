/* The four GPU benchmarks' algorithms, written once and compiled three ways:
 * as the wasm32 guest (clang, freestanding), as the native reference (gcc)
 * and as the hand-written CUDA ceiling (nvcc). One source is what makes the
 * native answers a valid check of the guests bit for bit: the same
 * operations in the same order. Floating-point code therefore must not be
 * contracted into FMAs (gcc -ffp-contract=off, nvcc --fmad=false; wasm has
 * no FMA) and calls no libm: log and exp are below, sqrt is IEEE-exact
 * everywhere.
 *
 * No libc: the guest is built with -nostdlib, so this header includes
 * nothing and names its own integer types. */
#ifndef WW_BENCH_GPU_ALGOS_H
#define WW_BENCH_GPU_ALGOS_H

#ifdef __CUDACC__
#define BF __host__ __device__ static inline
#else
#define BF static inline
#endif

typedef unsigned char bu8;
typedef unsigned int bu32;
typedef int bi32;
typedef unsigned long long bu64;
typedef long long bi64;

#ifdef __CUDACC__
#define B_SQRT(x) sqrt(x) /* CUDA's double sqrt is correctly rounded */
#else
#define B_SQRT(x) __builtin_sqrt(x) /* f64.sqrt / sqrtsd (needs -fno-math-errno) */
#endif

/* ------------------------------------------------------------ mandelbrot */

#define MANDEL_MAX_ITER 256

/* Iterations before |z| > 2 for pixel (px, py) of a w x h image, up to
 * MANDEL_MAX_ITER (inside the set). f32, as a shader would do it. */
BF bi32 mandel_iter(bi32 px, bi32 py, bi32 w, bi32 h) {
  float scale = 2.5f / (float)h;
  float cx = ((float)px - 0.5f * (float)w) * scale - 0.75f;
  float cy = ((float)py - 0.5f * (float)h) * scale;
  float zx = 0.0f, zy = 0.0f;
  bi32 i = 0;
  while (i < MANDEL_MAX_ITER) {
    float zx2 = zx * zx, zy2 = zy * zy;
    if (zx2 + zy2 > 4.0f) break;
    zy = 2.0f * zx * zy + cy;
    zx = zx2 - zy2 + cx;
    ++i;
  }
  return i;
}

/* A smooth palette of the iteration count; black inside the set. */
BF void mandel_color(bi32 it, float* r, float* g, float* b) {
  if (it >= MANDEL_MAX_ITER) {
    *r = *g = *b = 0.0f;
    return;
  }
  float t = (float)it / (float)MANDEL_MAX_ITER;
  float u = 1.0f - t;
  *r = 9.0f * u * t * t * t;
  *g = 15.0f * u * u * t * t;
  *b = 8.5f * u * u * u * t;
}

/* Pixel of instance `id` when every `step`-th pixel is drawn: step 1 is the
 * whole image; a larger step samples every row evenly, so a subset run costs
 * per pixel what the whole image does. */
BF void mandel_pixel(bu32 id, bu32 step, bu32 w, bi32* x, bi32* y) {
  bu64 p = (bu64)id * step;
  *x = (bi32)(p % w);
  *y = (bi32)(p / w);
}

/* --------------------------------------------------------------- sha-256 */

#define SHA_K_VALUES                                                                                            \
  {                                                                                                             \
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,     \
        0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u, \
        0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, \
        0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, \
        0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, \
        0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, \
        0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u, \
        0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u  \
  }

/* Device code cannot read a host array, so CUDA gets its own copy in
 * constant memory and the shared function picks the one of its side. */
#ifdef __CUDACC__
__constant__ bu32 sha_k_dev[64] = SHA_K_VALUES;
#endif
static const bu32 sha_k_host[64] = SHA_K_VALUES;

BF bu32 sha_rotr(bu32 x, int n) { return (x >> n) | (x << (32 - n)); }

BF void sha256_block(bu32 st[8], bu32 w[16]) {
#ifdef __CUDA_ARCH__
  const bu32* k = sha_k_dev;
#else
  const bu32* k = sha_k_host;
#endif
  bu32 a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
  for (int i = 0; i < 64; ++i) {
    bu32 wi;
    if (i < 16) {
      wi = w[i];
    } else {
      /* A 16-word ring instead of a 64-word schedule keeps the guest's
       * stack frame (and a GPU thread's local memory) small. */
      bu32 w15 = w[(i - 15) & 15], w2 = w[(i - 2) & 15];
      bu32 s0 = sha_rotr(w15, 7) ^ sha_rotr(w15, 18) ^ (w15 >> 3);
      bu32 s1 = sha_rotr(w2, 17) ^ sha_rotr(w2, 19) ^ (w2 >> 10);
      wi = w[i & 15] + s0 + w[(i - 7) & 15] + s1;
      w[i & 15] = wi;
    }
    bu32 S1 = sha_rotr(e, 6) ^ sha_rotr(e, 11) ^ sha_rotr(e, 25);
    bu32 ch = (e & f) ^ (~e & g);
    bu32 t1 = h + S1 + ch + k[i] + wi;
    bu32 S0 = sha_rotr(a, 2) ^ sha_rotr(a, 13) ^ sha_rotr(a, 22);
    bu32 maj = (a & b) ^ (a & c) ^ (b & c);
    bu32 t2 = S0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  st[0] += a;
  st[1] += b;
  st[2] += c;
  st[3] += d;
  st[4] += e;
  st[5] += f;
  st[6] += g;
  st[7] += h;
}

/* SHA-256 of exactly 64 bytes: the message block, then the padding block
 * (0x80, zeros, bit length 512). */
BF void sha256_64(const bu8* msg, bu8* out) {
  bu32 st[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  bu32 w[16];
  for (int i = 0; i < 16; ++i)
    w[i] = (bu32)msg[4 * i] << 24 | (bu32)msg[4 * i + 1] << 16 | (bu32)msg[4 * i + 2] << 8 | (bu32)msg[4 * i + 3];
  sha256_block(st, w);
  w[0] = 0x80000000u;
  for (int i = 1; i < 15; ++i) w[i] = 0;
  w[15] = 512;
  sha256_block(st, w);
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = (bu8)(st[i] >> 24);
    out[4 * i + 1] = (bu8)(st[i] >> 16);
    out[4 * i + 2] = (bu8)(st[i] >> 8);
    out[4 * i + 3] = (bu8)st[i];
  }
}

BF bu64 splitmix64(bu64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Message `index` of the data set (messages.bin is these, in order). */
BF void sha_message(bu64 index, bu8* out) {
  for (int j = 0; j < 8; ++j) {
    bu64 v = splitmix64(index * 8 + (bu64)j);
    for (int b = 0; b < 8; ++b) out[8 * j + b] = (bu8)(v >> (8 * b));
  }
}

/* ------------------------------------------------------- monte carlo f64 */

/* Bits of a double without memcpy (not available to the freestanding guest). */
BF bu64 mc_bits(double d) {
  union {
    double d;
    bu64 u;
  } v;
  v.d = d;
  return v.u;
}
BF double mc_double(bu64 u) {
  union {
    double d;
    bu64 u;
  } v;
  v.u = u;
  return v.d;
}

#define MC_LN2 0.6931471805599453
/* ln 2 split (fdlibm's) so that k * MC_LN2_HI is exact for the k of mc_exp. */
#define MC_LN2_HI 6.93147180369123816490e-01
#define MC_LN2_LO 1.90821492927058770002e-10
#define MC_INV_LN2 1.4426950408889634

/* Natural log for finite x > 0 (normal numbers): x = m * 2^e with m in
 * [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1)) by its series. */
BF double mc_log(double x) {
  bu64 u = mc_bits(x);
  bi32 e = (bi32)((u >> 52) & 0x7ff) - 1023;
  double m = mc_double((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {
    m = m * 0.5;
    e = e + 1;
  }
  double f = (m - 1.0) / (m + 1.0);
  double f2 = f * f;
  double s = 1.0 / 23.0;
  s = s * f2 + 1.0 / 21.0;
  s = s * f2 + 1.0 / 19.0;
  s = s * f2 + 1.0 / 17.0;
  s = s * f2 + 1.0 / 15.0;
  s = s * f2 + 1.0 / 13.0;
  s = s * f2 + 1.0 / 11.0;
  s = s * f2 + 1.0 / 9.0;
  s = s * f2 + 1.0 / 7.0;
  s = s * f2 + 1.0 / 5.0;
  s = s * f2 + 1.0 / 3.0;
  s = s * f2 + 1.0;
  return (double)e * MC_LN2 + 2.0 * f * s;
}

/* exp for |x| < 700: x = k ln2 + r (Cody-Waite), |r| <= ln2/2, Taylor series of e^r,
 * then 2^k built in the exponent bits. */
BF double mc_exp(double x) {
  double kd = x * MC_INV_LN2;
  bi32 k = (bi32)(kd >= 0.0 ? kd + 0.5 : kd - 0.5);
  double r = (x - (double)k * MC_LN2_HI) - (double)k * MC_LN2_LO;
  double p = 1.0 / 6227020800.0; /* 1/13! */
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return p * mc_double((bu64)(bi64)(k + 1023) << 52);
}

/* xorshift64*: integer state, uniform doubles in [0, 1) from the top 53 bits. */
BF bu64 mc_next(bu64* s) {
  bu64 x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1dull;
}
BF double mc_uniform(bu64* s) { return (double)(mc_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* A European call (S0 = K = 100, r = 5%, sigma = 20%, T = 1 year) priced
 * from `samples` terminal prices of geometric Brownian motion, normals by
 * Marsaglia's polar method (a data-dependent rejection loop). Instance
 * `seed` draws its own stream. */
BF double mc_price(bu32 seed, bi32 samples) {
  const double s0 = 100.0, strike = 100.0, rate = 0.05, sigma = 0.2, t = 1.0;
  const double drift = (rate - 0.5 * sigma * sigma) * t;
  const double vol = sigma * B_SQRT(t);
  bu64 s = splitmix64((bu64)seed) | 1; /* xorshift's state must not be 0 */
  double sum = 0.0;
  for (bi32 i = 0; i < samples; ++i) {
    double u, v, q;
    do {
      u = 2.0 * mc_uniform(&s) - 1.0;
      v = 2.0 * mc_uniform(&s) - 1.0;
      q = u * u + v * v;
    } while (q >= 1.0 || q == 0.0);
    double z = u * B_SQRT(-2.0 * mc_log(q) / q);
    double st = s0 * mc_exp(drift + vol * z);
    double payoff = st - strike;
    if (payoff > 0.0) sum += payoff;
  }
  return mc_exp(-rate * t) * (sum / (double)samples);
}

/* --------------------------------------------------------------- collatz */

/* No start below 2^68 is known to need more; the cap only bounds a run. */
#define COLLATZ_CAP 100000

/* Steps of the 3n+1 map from n to 1 (COLLATZ_CAP if not reached, -1 for a
 * start of 0 or an overflow of 3n+1). */
BF bi32 collatz_steps(bu64 n) {
  if (n == 0) return -1;
  bi32 steps = 0;
  while (n != 1 && steps < COLLATZ_CAP) {
    if (n & 1) {
      if (n > (0xffffffffffffffffull - 1) / 3) return -1;
      n = 3 * n + 1;
    } else {
      n >>= 1;
    }
    ++steps;
  }
  return steps;
}

#endif /* WW_BENCH_GPU_ALGOS_H */
