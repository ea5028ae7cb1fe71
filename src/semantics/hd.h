// WW_HD marks functions that must compile for both the host and the device
// (nvcc); with a plain C++ compiler it expands to nothing.
#pragma once

#if defined(__CUDACC__) || defined(__CUDA_ARCH__) || defined(__NVCC__) || defined(__CUDACC_RTC__)
#define WW_HD __host__ __device__
#else
#define WW_HD
#endif
