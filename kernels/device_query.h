// The local GPU as an engine::DeviceSpec, and how many GPUs there are. CUDA-free header; used
// by the CLI (--device local), the GPU tests (to skip cleanly) and later the studio.
#pragma once

#include "engine/core/status.h"
#include "engine/device/device_spec.h"

namespace stof::kernels {

// Number of CUDA devices, or an error saying why there are none usable (no driver, no
// device): GPU tests print that reason when they skip.
engine::Expected<int> CudaDeviceCount();

// Fills a DeviceSpec from cudaDeviceProp and device attributes. DRAM bandwidth is the
// theoretical peak 2 x memory clock x bus width; the fp16 tensor rate is SMs x boost clock x
// dense fp16 FLOP per SM per clock for the architecture (sm_80: 2048, sm_86/89: 512,
// sm_90: 4096) - an upper bound: the H100 SXM reports a 1980 MHz boost, so this gives
// 1070 TFLOP/s against the data sheet's 989 at 1830 MHz. Measured rates replace both in the
// profiler (a later issue).
engine::Expected<engine::DeviceSpec> QueryDeviceSpec(int device);

}  // namespace stof::kernels
