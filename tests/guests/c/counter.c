/* Every instance adds its index + 1 to state[0] and counts itself in
 * state[1]; returns the old value of state[1] (its arrival order). After N
 * instances, state[0] = N(N+1)/2 and state[1] = N. */
#include "wasmwarp.h"

WW_EXPORT("main") int counter(void) {
  int id = ww_thread_id();
  ww_atomic_add(0, id + 1);
  return ww_atomic_add(1, 1);
}
