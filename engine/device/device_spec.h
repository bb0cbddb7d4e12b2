// DeviceSpec: the GPU figures the analytical models need (kernel selection Eq. 2, floors,
// MCFuser's alpha). Built-in entries let a machine without a GPU predict for a named device;
// kernels/ fills one from the real device (kernels/device_query.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"

namespace stof::engine {

struct DeviceSpec {
  std::string name;                  // "H100-SXM-80GB"
  int sm_count = 0;
  int64_t smem_per_sm_bytes = 0;     // shared memory per SM
  int64_t smem_per_block_bytes = 0;  // max shared memory per block (opt-in)
  int max_warps_per_sm = 0;
  int64_t l2_bytes = 0;
  double dram_bytes_per_s = 0;       // peak DRAM bandwidth
  double fp16_tensor_flops = 0;      // peak dense fp16 tensor-core FLOP/s, fp32 accumulate
  int cc_major = 0, cc_minor = 0;    // compute capability
  std::string source = "built-in";   // "built-in" or "queried"

  Status Validate(const std::string& what = "device") const;
  bool operator==(const DeviceSpec&) const = default;
};

// A100-PCIe-40GB, RTX-4090, H100-SXM-80GB, H200 (vendor data sheets; see device_spec.cpp).
const std::vector<DeviceSpec>& BuiltinDevices();

// Looks a built-in up by name, case-insensitively, also by short alias ("h100", "a100",
// "4090", "h200"); the error lists the known names.
Expected<DeviceSpec> FindBuiltinDevice(const std::string& name);

}  // namespace stof::engine
