/* The native reference of the four GPU benchmarks: the same algos.h the
 * guests are built from, compiled with gcc, checking what wasmwarp wrote.
 *
 *   gpu_ref gen-messages FILE COUNT          messages.bin for sha256
 *   gpu_ref mandel FILE.npy W H STEP N       iteration counts (i32 .npy)
 *   gpu_ref sha256 MSGS DIGESTS N            digests.bin (N x 32 bytes)
 *   gpu_ref sha256-hex MSGS INDEX            one message and its digest, hex
 *   gpu_ref montecarlo FILE.npy SAMPLES N    prices (f64 .npy), bit for bit
 *   gpu_ref collatz FILE.npy BASE N          step counts (i32 .npy)
 *
 * A check prints "ok ..." and exits 0, or prints the first mismatches and
 * exits 1; bad arguments or files exit 2. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"

static int usage(void) {
  fprintf(stderr,
          "usage: gpu_ref gen-messages FILE COUNT | mandel FILE.npy W H STEP N |\n"
          "       sha256 MSGS DIGESTS N | sha256-hex MSGS INDEX |\n"
          "       montecarlo FILE.npy SAMPLES N | collatz FILE.npy BASE N\n");
  return 2;
}

static int parse_u64(const char* s, uint64_t* out) {
  char* end;
  if (!*s) return 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end) return 0;
  *out = v;
  return 1;
}

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "gpu_ref: cannot open %s\n", path);
    return NULL;
  }
  size_t cap = 1 << 20, n = 0;
  uint8_t* buf = malloc(cap);
  for (;;) {
    if (n == cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  *size = n;
  return buf;
}

/* The data of a 1-D (or N x 1) little-endian .npy array of `descr` ("<i4",
 * "<f8") with at least `rows` rows; NULL with a message otherwise. */
static const uint8_t* npy_data(const uint8_t* buf, size_t size, const char* descr, uint64_t rows, size_t item,
                               const char* path) {
  if (size < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "gpu_ref: %s is not a .npy file\n", path);
    return NULL;
  }
  size_t hlen, hstart;
  if (buf[6] == 1) {
    hlen = buf[8] | (size_t)buf[9] << 8;
    hstart = 10;
  } else {
    if (size < 12) return NULL;
    hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    hstart = 12;
  }
  if (hstart + hlen > size) {
    fprintf(stderr, "gpu_ref: %s: truncated header\n", path);
    return NULL;
  }
  char header[4096];
  size_t copy = hlen < sizeof header - 1 ? hlen : sizeof header - 1;
  memcpy(header, buf + hstart, copy);
  header[copy] = 0;
  if (!strstr(header, descr)) {
    fprintf(stderr, "gpu_ref: %s: expected dtype %s, header is %s\n", path, descr, header);
    return NULL;
  }
  if ((size - hstart - hlen) / item < rows) {
    fprintf(stderr, "gpu_ref: %s holds %zu rows, expected %llu\n", path, (size - hstart - hlen) / item,
            (unsigned long long)rows);
    return NULL;
  }
  return buf + hstart + hlen;
}

static int finish(const char* what, uint64_t n, uint64_t bad) {
  if (bad) {
    printf("FAIL %s: %llu of %llu instances differ from the native build\n", what, (unsigned long long)bad,
           (unsigned long long)n);
    return 1;
  }
  printf("ok %s: all %llu instances match the native build\n", what, (unsigned long long)n);
  return 0;
}

static int check_i32(const char* what, const char* path, uint64_t n, int32_t (*expect)(uint64_t, const uint64_t*),
                     const uint64_t* params) {
  size_t size;
  uint8_t* buf = read_file(path, &size);
  if (!buf) return 2;
  const uint8_t* d = npy_data(buf, size, "<i4", n, 4, path);
  if (!d) return 2;
  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    int32_t got;
    memcpy(&got, d + 4 * i, 4);
    int32_t want = expect(i, params);
    if (got != want && ++bad <= 5) printf("  instance %llu: got %d, native %d\n", (unsigned long long)i, got, want);
  }
  free(buf);
  return finish(what, n, bad);
}

static int32_t expect_mandel(uint64_t i, const uint64_t* p) {
  int x, y;
  mandel_pixel((bu32)i, (bu32)p[2], (bu32)p[0], &x, &y);
  return mandel_iter(x, y, (int)p[0], (int)p[1]);
}

static int32_t expect_collatz(uint64_t i, const uint64_t* p) {
  /* The guest adds the i32 index to the i64 base with wrap-around. */
  return collatz_steps(p[0] + (bu32)i);
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const char* cmd = argv[1];
  uint64_t a, b, c, n;

  if (!strcmp(cmd, "gen-messages") && argc == 4) {
    if (!parse_u64(argv[3], &n)) return usage();
    FILE* f = fopen(argv[2], "wb");
    if (!f) {
      fprintf(stderr, "gpu_ref: cannot write %s\n", argv[2]);
      return 2;
    }
    uint8_t m[64];
    for (uint64_t i = 0; i < n; ++i) {
      sha_message(i, m);
      if (fwrite(m, 1, 64, f) != 64) {
        fprintf(stderr, "gpu_ref: write error on %s\n", argv[2]);
        return 2;
      }
    }
    return fclose(f) == 0 ? 0 : 2;
  }

  if (!strcmp(cmd, "mandel") && argc == 7) {
    uint64_t p[3];
    if (!parse_u64(argv[3], &p[0]) || !parse_u64(argv[4], &p[1]) || !parse_u64(argv[5], &p[2]) ||
        !parse_u64(argv[6], &n) || p[0] == 0 || p[1] == 0 || p[2] == 0)
      return usage();
    return check_i32("mandel", argv[2], n, expect_mandel, p);
  }

  if (!strcmp(cmd, "collatz") && argc == 5) {
    uint64_t p[1];
    if (!parse_u64(argv[3], &p[0]) || !parse_u64(argv[4], &n)) return usage();
    return check_i32("collatz", argv[2], n, expect_collatz, p);
  }

  if (!strcmp(cmd, "sha256") && argc == 5) {
    if (!parse_u64(argv[4], &n)) return usage();
    size_t ms, ds;
    uint8_t* msgs = read_file(argv[2], &ms);
    uint8_t* digs = msgs ? read_file(argv[3], &ds) : NULL;
    if (!digs) return 2;
    if (ms / 64 < n || ds / 32 < n) {
      fprintf(stderr, "gpu_ref: %s or %s holds fewer than %llu records\n", argv[2], argv[3], (unsigned long long)n);
      return 2;
    }
    uint64_t bad = 0;
    uint8_t want[32];
    for (uint64_t i = 0; i < n; ++i) {
      sha256_64(msgs + 64 * i, want);
      if (memcmp(want, digs + 32 * i, 32) != 0 && ++bad <= 5)
        printf("  instance %llu: digest differs\n", (unsigned long long)i);
    }
    return finish("sha256", n, bad);
  }

  if (!strcmp(cmd, "sha256-hex") && argc == 4) {
    if (!parse_u64(argv[3], &a)) return usage();
    size_t ms;
    uint8_t* msgs = read_file(argv[2], &ms);
    if (!msgs) return 2;
    if (a >= ms / 64) {
      fprintf(stderr, "gpu_ref: %s has no message %llu\n", argv[2], (unsigned long long)a);
      return 2;
    }
    uint8_t d[32];
    sha256_64(msgs + 64 * a, d);
    for (int i = 0; i < 64; ++i) printf("%02x", msgs[64 * a + i]);
    printf(" ");
    for (int i = 0; i < 32; ++i) printf("%02x", d[i]);
    printf("\n");
    return 0;
  }

  if (!strcmp(cmd, "montecarlo") && argc == 5) {
    if (!parse_u64(argv[3], &b) || !parse_u64(argv[4], &n) || b == 0 || b > 0x7fffffff) return usage();
    size_t size;
    uint8_t* buf = read_file(argv[2], &size);
    if (!buf) return 2;
    const uint8_t* d = npy_data(buf, size, "<f8", n, 8, argv[2]);
    if (!d) return 2;
    uint64_t bad = 0;
    double mean = 0;
    for (uint64_t i = 0; i < n; ++i) {
      double got, want = mc_price((bu32)i, (int)b);
      memcpy(&got, d + 8 * i, 8);
      mean += want;
      if (memcmp(&got, &want, 8) != 0 && ++bad <= 5)
        printf("  instance %llu: got %.17g, native %.17g\n", (unsigned long long)i, got, want);
    }
    /* Black-Scholes gives 10.4506 for these parameters: a sanity check of
     * mc_log/mc_exp, which the bit-for-bit comparison cannot catch. */
    if (n) printf("  mean price %.4f (Black-Scholes 10.4506)\n", mean / (double)n);
    free(buf);
    return finish("montecarlo", n, bad);
  }
  (void)c;
  return usage();
}
