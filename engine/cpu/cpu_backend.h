// CpuBackend: engine::Backend over host memory and the fp32 reference (reference.h). Slow and
// exact; the baseline every other backend is checked against, and what the CLI uses when no
// GPU is present. Supports DType::kF32 only; the layer ops (engine/layer_ops.h) run the
// same reference (cpu_layer_ops.cpp), so a whole layer can be checked against it.
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
  Status RunMha(const MhaCall& call) override;  // every MhaVariant: the same reference

  // The layer ops (cpu_layer_ops.cpp), by the fp32 reference; ParamMap entries are ignored
  // (they change how a GPU computes, not what).
  Status RunGemm(const GemmCall& call) override;
  Status RunBatchedGemm(const BatchedGemmCall& call) override;
  Status RunEpilogue(const EpilogueCall& call) override;
  Status RunNorm(const NormCall& call) override;
  Status RunGemmNorm(const GemmNormCall& call) override;
  Status RunGemmChain(const GemmChainCall& call) override;
  Status RunScores(const ScoresCall& call) override;
  Status RunHeads(const HeadsCall& call) override;
};

}  // namespace stof::engine
