// Free and total memory of the current CUDA device, for callers that size their buffers to what
// is left (the rotating input sets of `stof bench mha`). CUDA-free header.
#pragma once

#include <cstdint>

#include "engine/core/status.h"

namespace stof::kernels {

struct DeviceMemory {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};

// cudaMemGetInfo on the current device; an error names the call when it fails (no GPU).
engine::Expected<DeviceMemory> QueryDeviceMemory();

}  // namespace stof::kernels
