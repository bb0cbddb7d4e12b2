// STOF_CUBLAS_TRY: turns a failed cuBLAS call into an engine::Error carrying the call text and
// cuBLAS's status name and description ("cuBLAS: cublasCreate(&handle): CUBLAS_STATUS_NOT_INITIALIZED
// (the library was not initialized)"). Private to kernels/ (includes cuBLAS headers); used by
// gemm/cublas_gemm.cpp and attention/native_attention.cu. Public headers stay CUDA-free.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "engine/core/status.h"

namespace stof::kernels {

inline engine::Error CublasError(cublasStatus_t s, const char* call) {
  return engine::Error{std::string("cuBLAS: ") + call + ": " + cublasGetStatusName(s) + " (" +
                       cublasGetStatusString(s) + ")"};
}

}  // namespace stof::kernels

// Returns the error from the enclosing function (Status or Expected<T>) when `call` fails.
#define STOF_CUBLAS_TRY(call)                                           \
  do {                                                                  \
    cublasStatus_t stof_cublas_st_ = (call);                            \
    if (stof_cublas_st_ != CUBLAS_STATUS_SUCCESS)                       \
      return ::stof::kernels::CublasError(stof_cublas_st_, #call);      \
  } while (0)
