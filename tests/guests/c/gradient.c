/* The C version of rust/05_pixel_output.rs: instance x writes a red
 * gradient pixel (x / 800) into each of `rows` rows and returns x. */
#include "wasmwarp.h"

WW_EXPORT("main") int gradient(int rows) {
  int x = ww_thread_id();
  float r = (float)x / 800.0f;
  for (int y = 0; y < rows; ++y) ww_set_pixel(x, y, r, 0.0f, 0.0f, 1.0f);
  return x;
}
