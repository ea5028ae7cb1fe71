/* Guest (a): one Mandelbrot pixel per instance. The instance index comes
 * from gpu.get_thread_id; the colour goes out through gpu.set_pixel and the
 * iteration count is returned, so the native build can check every pixel.
 *   render(w, h, step): instance i draws pixel i*step of the w x h image. */
#include "../../sdk/c/wasmwarp.h"
#include "algos.h"

WW_EXPORT("render") int render(int w, int h, int step) {
  int x, y;
  mandel_pixel((bu32)ww_thread_id(), (bu32)step, (bu32)w, &x, &y);
  int it = mandel_iter(x, y, w, h);
  float r, g, b;
  mandel_color(it, &r, &g, &b);
  ww_set_pixel(x, y, r, g, b, 1.0f);
  return it;
}
