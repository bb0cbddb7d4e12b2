// QueryDeviceSpec / CudaDeviceCount over the CUDA runtime (see device_query.h); why there is
// no GPU is worded by engine/device/no_gpu.h. CUDA 13 removed
// clockRate and memoryClockRate from cudaDeviceProp; they come from cudaDeviceGetAttribute.
#include "kernels/device_query.h"

#include "engine/device/no_gpu.h"
#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {
// Dense fp16 tensor-core FLOP per SM per clock with fp32 accumulation, by architecture.
double TensorFlopsPerSmPerClock(int major, int minor) {
  if (major == 8 && minor == 0) return 2048;  // A100
  if (major == 8) return 512;                 // GA10x / AD10x consumer parts, fp32 accumulate
  if (major == 9) return 4096;                // H100 / H200
  if (major >= 10) return 8192;               // Blackwell, datacenter
  return 1024;                                // Volta / Turing class
}
}  // namespace

engine::Expected<int> CudaDeviceCount() {
  engine::CudaProbe p;
  const cudaError_t e = cudaGetDeviceCount(&p.device_count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error for later calls
    p.error = static_cast<int>(e);
    p.error_name = cudaGetErrorName(e);
    p.error_text = cudaGetErrorString(e);
    (void)cudaDriverGetVersion(&p.driver_version);  // 0: no driver installed
    (void)cudaRuntimeGetVersion(&p.runtime_version);
  }
  if (const std::string why = engine::NoGpuReason(p); !why.empty())
    return engine::Error{"no usable GPU: " + why};
  return p.device_count;
}

engine::Expected<engine::DeviceSpec> QueryDeviceSpec(int device) {
  auto count = CudaDeviceCount();
  if (!count.IsOk()) return engine::Error{count.Message()};
  if (device < 0 || device >= *count)
    return engine::Error{"device " + std::to_string(device) + ": only " +
                         std::to_string(*count) + " GPU(s) present"};
  cudaDeviceProp p{};
  STOF_CUDA_TRY(cudaGetDeviceProperties(&p, device));
  int clock_khz = 0, mem_clock_khz = 0;
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));

  engine::DeviceSpec s;
  s.name = p.name;
  s.sm_count = p.multiProcessorCount;
  s.smem_per_sm_bytes = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
  s.smem_per_block_bytes = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  s.max_warps_per_sm = p.maxThreadsPerMultiProcessor / 32;
  s.l2_bytes = p.l2CacheSize;
  s.dram_bytes_per_s = 2.0 * mem_clock_khz * 1e3 * (p.memoryBusWidth / 8.0);
  s.fp16_tensor_flops =
      s.sm_count * (clock_khz * 1e3) * TensorFlopsPerSmPerClock(p.major, p.minor);
  s.cc_major = p.major;
  s.cc_minor = p.minor;
  s.source = "queried";
  if (engine::Status v = s.Validate("device " + std::to_string(device)); !v.IsOk())
    return engine::Error{v.Message()};
  return s;
}

}  // namespace stof::kernels
