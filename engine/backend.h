// engine::Backend: the interface every compute backend implements, with no CUDA types, so the
// engine, the CLI and the GUI can drive CPU and GPU alike. CpuBackend (engine/cpu/) runs the
// fp32 reference; CudaBackend (kernels/) runs our CUDA kernels. Buffers are opaque pointers in
// the backend's memory space; streams are opaque handles.
#pragma once

#include <cstddef>
#include <string>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

// What kernel to run for MHA and with which parameters (Eq. 1 / Eq. 2 or an override).
struct MhaConfig {
  MhaKernel kernel = MhaKernel::kBlockWise;
  int64_t block_m = 64, block_n = 64, num_warps = 4;
};

// One MHA call: q, k, v, o are [B, H, L, d] in the backend's memory, of workload.dtype.
struct MhaCall {
  Workload workload;
  const Mask* mask = nullptr;  // L x L, shared by all (batch, head)
  MhaConfig config;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  void* stream = nullptr;  // opaque; nullptr = the backend's default
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;       // "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
  virtual DeviceSpec Device() const = 0;      // what the models should assume
  virtual bool Supports(DType dtype) const = 0;

  virtual Expected<void*> Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  virtual Status CopyToDevice(void* dst, const void* host_src, size_t bytes) = 0;
  virtual Status CopyToHost(void* host_dst, const void* src, size_t bytes) = 0;
  virtual Status Synchronize() = 0;

  // Runs masked MHA; validates the call (shapes, mask size, dtype, config) first.
  virtual Status RunMha(const MhaCall& call) = 0;
};

// Checks what every backend needs of an MhaCall: workload valid, mask present and L x L,
// pointers set. Backends call it first.
Status ValidateMhaCall(const MhaCall& call);

}  // namespace stof::engine
