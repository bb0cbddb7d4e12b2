// QueryDeviceMemory (device_memory.h) over the CUDA runtime.
#include "kernels/util/device_memory.h"

#include "kernels/cuda_check.h"

namespace stof::kernels {

engine::Expected<DeviceMemory> QueryDeviceMemory() {
  size_t free_bytes = 0, total_bytes = 0;
  STOF_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  DeviceMemory m;
  m.free_bytes = static_cast<int64_t>(free_bytes);
  m.total_bytes = static_cast<int64_t>(total_bytes);
  return m;
}

}  // namespace stof::kernels
