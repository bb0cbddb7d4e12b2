// NoGpuReason (no_gpu.h).
#include "engine/device/no_gpu.h"

namespace stof::engine {

namespace {
// 12060 -> "12.6"
std::string CudaVersion(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

std::string NoGpuReason(const CudaProbe& p) {
  if (p.error == 0) return p.device_count > 0 ? "" : "no CUDA device present";
  if (p.error == kCudaErrorInsufficientDriver && p.driver_version == 0)
    return "no NVIDIA driver found (the CUDA driver library libcuda.so.1 is not installed or "
           "cannot be loaded); install the NVIDIA driver to use a GPU";
  if (p.error == kCudaErrorInsufficientDriver)
    return "the NVIDIA driver supports CUDA " + CudaVersion(p.driver_version) +
           ", this program needs CUDA " + CudaVersion(p.runtime_version) +
           " or a newer driver (" + p.error_name + "); update the NVIDIA driver";
  if (p.error == kCudaErrorNoDevice) return "no NVIDIA GPU found by the driver (" + p.error_name + ")";
  return p.error_name + ": " + p.error_text;
}

}  // namespace stof::engine
