// CpuBackend: engine::Backend over host memory and the fp32 reference (reference.h). Slow and
// exact; the baseline every other backend is checked against, and what the CLI uses when no
// GPU is present. Supports DType::kF32 only.
#pragma once

#include "engine/backend.h"

namespace stof::engine {

class CpuBackend final : public Backend {
 public:
  std::string Name() const override { return "cpu"; }
  DeviceSpec Device() const override;  // the H100 built-in: what a GPU-less user predicts for
  bool Supports(DType dtype) const override { return dtype == DType::kF32; }

  Expected<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;
  Status CopyToDevice(void* dst, const void* host_src, size_t bytes) override;
  Status CopyToHost(void* host_dst, const void* src, size_t bytes) override;
  Status Synchronize() override { return Status::Ok(); }
  Status RunMha(const MhaCall& call) override;
};

}  // namespace stof::engine
