/* Mandelbrot set, one image row per instance: `row(y)` renders row y of a
 * WIDTH x HEIGHT image into the exported `pixels` buffer (one escape count
 * per pixel, 0..MAX_ITER) and returns the row's total iteration count, a
 * checksum the native build reproduces exactly.
 *
 * A batch renders the whole image with one instance per row:
 *   wasmwarp run --invoke row -n 768 mandelbrot.wasm @index
 * Built with -DWW_GPU_IMAGE the module also imports gpu.set_pixel and
 * colours the batch's output image through the guest SDK (sdk/c/wasmwarp.h;
 * `wasmwarp run` provides the `gpu` module on both backends, --image its
 * canvas). */
#ifdef WW_GPU_IMAGE
#include "wasmwarp.h"
#endif
#include "ww_guest.h"

#define WIDTH 1024
#define HEIGHT 768
#define MAX_ITER 256

static uint16_t pixels[WIDTH];

WW_EXPORT("pixels") uint32_t pixels_addr(void) { return (uint32_t)(uintptr_t)pixels; }

WW_EXPORT("row") int32_t row(int32_t y) {
  if (y < 0 || y >= HEIGHT) return -1;
  /* The view: real in [-2.5, 1), imaginary in [-1.3125, 1.3125). */
  const double scale = 3.5 / WIDTH;
  double ci = (y - HEIGHT / 2) * scale;
  int32_t total = 0;
  for (int x = 0; x < WIDTH; x++) {
    double cr = -2.5 + x * scale;
    double zr = 0, zi = 0;
    int k = 0;
    while (k < MAX_ITER && zr * zr + zi * zi <= 4.0) {
      double t = zr * zr - zi * zi + cr;
      zi = 2.0 * zr * zi + ci;
      zr = t;
      k++;
    }
    pixels[x] = (uint16_t)k;
    total += k;
#ifdef WW_GPU_IMAGE
    /* sqrt spreads the many low escape counts over more brightness. */
    float t = k == MAX_ITER ? 0.0f : __builtin_sqrtf((float)k / MAX_ITER);
    ww_set_pixel(x, y, t * 1.6f, t * t * 1.2f, 0.25f + t * 0.5f, 1.0f);
#endif
  }
  return total;
}

#ifdef WW_NATIVE_MAIN
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* "mandelbrot.native FIRST COUNT" prints row(y) for each y in
 * [FIRST, FIRST+COUNT), one per line; "mandelbrot.native pixels FIRST COUNT"
 * writes those rows' `pixels` buffers (u16, little-endian) to stdout, as
 * --mem-out pixels:2048=FILE does. */
int main(int argc, char** argv) {
  int dump = argc > 1 && strcmp(argv[1], "pixels") == 0;
  int first = argc > 1 + dump ? atoi(argv[1 + dump]) : 0;
  int count = argc > 2 + dump ? atoi(argv[2 + dump]) : HEIGHT;
  for (int y = first; y < first + count; y++) {
    int r = row(y);
    if (dump) fwrite(pixels, sizeof pixels[0], WIDTH, stdout);
    else printf("%d\n", r);
  }
  return 0;
}
#endif
