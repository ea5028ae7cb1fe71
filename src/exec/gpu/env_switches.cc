// The measuring switches (gpu_backend.h): plain C++, for the batch engine
// calls them in builds without CUDA too.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

bool env_switch_on(const char* name) {
  const char* v = std::getenv(name);
  return !v || std::strcmp(v, "0") != 0;
}

uint32_t env_cap(const char* name, uint32_t most) {
  const char* v = std::getenv(name);
  const long k = v ? std::strtol(v, nullptr, 10) : 0;
  return k >= 1 ? uint32_t(std::min<long>(k, most)) : most;
}

}  // namespace ww::gpu
