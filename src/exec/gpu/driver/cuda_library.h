// Finding the CUDA toolkit's libraries that are loaded only when needed
// (NVRTC, nvJitLink), so the binary starts on machines without them.
#pragma once

#include <initializer_list>

namespace ww::gpu {

// dlopen of the first of `sonames` the dynamic loader finds, then of the
// same names under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64; null when none loads.
void* dlopen_cuda_library(std::initializer_list<const char*> sonames);

}  // namespace ww::gpu
