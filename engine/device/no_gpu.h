// Why CUDA found no usable GPU, in words a user can act on. The runtime's own message misleads
// on a machine with no NVIDIA driver at all: cudaGetDeviceCount then fails with "CUDA driver
// version is insufficient for CUDA runtime version", as if an update would do. The callers
// (kernels/device_query.cpp, profiler/capture/cupti_profiler.cpp) read the facts from the CUDA
// runtime into a CudaProbe; this CUDA-free part words them, so it is tested without CUDA.
#pragma once

#include <string>

namespace stof::engine {

struct CudaProbe {
  int error = 0;               // cudaGetDeviceCount's cudaError_t (0: success)
  std::string error_name;      // cudaGetErrorName, e.g. "cudaErrorInsufficientDriver"
  std::string error_text;      // cudaGetErrorString
  int device_count = 0;        // when error == 0
  int driver_version = 0;      // cudaDriverGetVersion: 0 when no driver is installed
  int runtime_version = 0;     // cudaRuntimeGetVersion, e.g. 12060
};

// The runtime's enum values we tell apart (stable since CUDA 3).
inline constexpr int kCudaErrorInsufficientDriver = 35;
inline constexpr int kCudaErrorNoDevice = 100;

// "no NVIDIA driver found (...)", "the NVIDIA driver supports CUDA 12.2, this program needs
// CUDA 12.6 (...)", "no NVIDIA GPU found by the driver", or the runtime's name and text;
// "" when the probe found a device.
std::string NoGpuReason(const CudaProbe& p);

}  // namespace stof::engine
