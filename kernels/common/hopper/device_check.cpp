// CheckSm90aDevice (device_check.h): the current device's compute capability.
#include "kernels/common/hopper/device_check.h"

#include <cuda_runtime.h>

#include "engine/core/text_format.h"
#include "kernels/cuda_check.h"

namespace stof::kernels::hopper {

engine::Status CheckSm90aDevice(const std::string& what) {
  int device = 0, major = 0, minor = 0;
  STOF_CUDA_TRY(cudaGetDevice(&device));
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major == 9 && minor == 0) return engine::Status::Ok();
  return engine::MakeError(what + "needs a compute capability 9.0 GPU (H100, H200; sm_90a code), "
                           "device " + engine::Str(device) + " is " + engine::Str(major) + "." +
                           engine::Str(minor));
}

}  // namespace stof::kernels::hopper
