// Check macros for the CUDA-side files of profiler/: STOF_CUPTI_TRY and STOF_PROFILER_CUDA_TRY
// turn a failed CUPTI or CUDA runtime call into an engine::Error carrying the call text, file
// and line ("profiler/capture/cupti_range.cpp:212: cuptiRangeProfilerEnable(&p):
// CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (...)"). The result name stays in the message so callers
// can classify the failure (privileges, no device) by text. Private to profiler/ (includes
// CUDA and CUPTI headers); the public headers stay CUDA-free.
#pragma once

#include <cuda_runtime.h>
#include <cupti_result.h>

#include <string>

#include "engine/core/status.h"

namespace stof::profiler {

// "/abs/path/profiler/capture/cupti_range.cpp" -> "profiler/capture/cupti_range.cpp": messages stay short and
// the same on every machine.
inline const char* ShortFile(const char* file) {
  const std::string f(file);
  const size_t at = f.rfind("profiler/");
  return at == std::string::npos ? file : file + at;
}

// "CUPTI_ERROR_X (CUPTI's description)".
inline std::string CuptiResultText(CUptiResult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuptiGetResultString(r, &name) != CUPTI_SUCCESS || !name) name = nullptr;
  if (cuptiGetErrorMessage(r, &text) != CUPTI_SUCCESS || !text) text = nullptr;
  std::string s = name ? name : "CUPTI error " + std::to_string(static_cast<int>(r));
  if (text && *text && s != text) s += std::string(" (") + text + ")";
  return s;
}

inline engine::Error CuptiError(CUptiResult r, const char* call, const char* file, int line) {
  return engine::Error{std::string(ShortFile(file)) + ":" + std::to_string(line) + ": " + call +
                       ": " + CuptiResultText(r)};
}

inline engine::Error ProfilerCudaError(cudaError_t e, const char* call, const char* file,
                                       int line) {
  return engine::Error{std::string(ShortFile(file)) + ":" + std::to_string(line) + ": " + call +
                       ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")"};
}

}  // namespace stof::profiler

// Returns the error from the enclosing function (Status or Expected<T>) when `call` fails.
#define STOF_CUPTI_TRY(call)                                                          \
  do {                                                                                \
    CUptiResult stof_cupti_res_ = (call);                                             \
    if (stof_cupti_res_ != CUPTI_SUCCESS)                                             \
      return ::stof::profiler::CuptiError(stof_cupti_res_, #call, __FILE__, __LINE__); \
  } while (0)

#define STOF_PROFILER_CUDA_TRY(call)                                                      \
  do {                                                                                    \
    cudaError_t stof_prof_cuda_err_ = (call);                                             \
    if (stof_prof_cuda_err_ != cudaSuccess)                                               \
      return ::stof::profiler::ProfilerCudaError(stof_prof_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)
