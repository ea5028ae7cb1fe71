// Compiled with include/ as the only include directory (CMakeLists.txt):
// the public header stands alone.
#include "wasmwarp/wasmwarp.h"
