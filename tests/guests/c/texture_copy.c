/* The C counterpart of rust_multivalue/texture_sample.rs: instance i copies
 * texture unit 0's texel at pixel (i % width, i / width) into the image and
 * returns its red byte. Needs clang's multi-value ABI (see wasmwarp.h):
 *   -mmultivalue -Xclang -target-abi -Xclang experimental-mv */
#include "wasmwarp.h"

WW_EXPORT("main") int texture_copy(int width, int height) {
  int i = ww_thread_id();
  if (width <= 0 || height <= 0) return -1;
  int x = i % width, y = i / width;
  float u = ((float)x + 0.5f) / (float)width;
  float v = ((float)y + 0.5f) / (float)height;
  ww_rgba c = ww_texture_sample(0, u, v);
  ww_set_pixel(x, y, c.r, c.g, c.b, c.a);
  return (int)(c.r * 255.0f + 0.5f);
}
