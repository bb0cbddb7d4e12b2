// The host check every sm_90a kernel family makes before it launches: the current device is a
// compute capability 9.0 GPU (the only one the architecture-specific wgmma / setmaxnreg code
// runs on). Used by the Hopper attention launch and the Hopper GEMM chain launch.
#pragma once

#include <string>

#include "engine/core/status.h"

namespace stof::kernels::hopper {

// Ok on a 9.0 device; otherwise "<what>needs a compute capability 9.0 GPU (H100, H200;
// sm_90a code), device N is X.Y".
engine::Status CheckSm90aDevice(const std::string& what);

}  // namespace stof::kernels::hopper
