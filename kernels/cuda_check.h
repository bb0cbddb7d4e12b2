// STOF_CUDA_TRY: turns a failed CUDA runtime call into an engine::Error carrying the call text,
// file and line ("kernels/device_query.cpp:41: cudaGetDeviceProperties(&p, device): invalid
// device ordinal"). Private to kernels/ (includes CUDA headers); public headers stay CUDA-free.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "engine/core/status.h"

namespace stof::kernels {

inline engine::Error CudaError(cudaError_t e, const char* call, const char* file, int line) {
  return engine::Error{std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                       cudaGetErrorString(e)};
}

}  // namespace stof::kernels

// Returns the error from the enclosing function (Status or Expected<T>) when `call` fails.
#define STOF_CUDA_TRY(call)                                                       \
  do {                                                                            \
    cudaError_t stof_cuda_err_ = (call);                                          \
    if (stof_cuda_err_ != cudaSuccess)                                            \
      return ::stof::kernels::CudaError(stof_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)
