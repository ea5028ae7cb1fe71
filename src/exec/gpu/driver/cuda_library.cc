#include "exec/gpu/driver/cuda_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace ww::gpu {

void* dlopen_cuda_library(std::initializer_list<const char*> sonames) {
  std::vector<std::string> dirs{""};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var); home && *home) dirs.push_back(std::string(home) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  for (const std::string& dir : dirs)
    for (const char* name : sonames)
      if (void* h = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

}  // namespace ww::gpu
