// Tests of NoGpuReason (engine/device/no_gpu.h): each way CUDA can find no GPU is worded so a
// user knows what to do; issue 16 found "CUDA driver version is insufficient" shown on a
// machine with no driver installed at all.
#include "engine/device/no_gpu.h"

#include <gtest/gtest.h>

namespace {

using stof::engine::CudaProbe;
using stof::engine::NoGpuReason;

CudaProbe Failed(int error, const char* name, int driver, int runtime) {
  CudaProbe p;
  p.error = error;
  p.error_name = name;
  p.error_text = "the runtime's text";
  p.driver_version = driver;
  p.runtime_version = runtime;
  return p;
}

TEST(NoGpu, NoDriverAtAllIsNotAnOldDriver) {
  const std::string why = NoGpuReason(Failed(35, "cudaErrorInsufficientDriver", 0, 12060));
  EXPECT_EQ(why.rfind("no NVIDIA driver found", 0), 0u) << why;
  EXPECT_EQ(why.find("insufficient"), std::string::npos) << why;
}

TEST(NoGpu, OldDriverNamesBothVersions) {
  EXPECT_EQ(NoGpuReason(Failed(35, "cudaErrorInsufficientDriver", 12020, 12060)),
            "the NVIDIA driver supports CUDA 12.2, this program needs CUDA 12.6 or a newer driver "
            "(cudaErrorInsufficientDriver); update the NVIDIA driver");
}

TEST(NoGpu, NoDeviceAndOtherErrors) {
  EXPECT_EQ(NoGpuReason(Failed(100, "cudaErrorNoDevice", 12060, 12060)),
            "no NVIDIA GPU found by the driver (cudaErrorNoDevice)");
  EXPECT_EQ(NoGpuReason(Failed(3, "cudaErrorInitializationError", 12060, 12060)),
            "cudaErrorInitializationError: the runtime's text");
  CudaProbe none;
  EXPECT_EQ(NoGpuReason(none), "no CUDA device present");
  none.device_count = 1;
  EXPECT_EQ(NoGpuReason(none), "");
}

}  // namespace
