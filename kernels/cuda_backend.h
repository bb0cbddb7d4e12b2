// CudaBackend: engine::Backend on one CUDA device, running our sparse MHA kernels (row-wise and
// block-wise, kernels/attention/; the unfused, SD and SDF variants on request) and the layer
// ops of engine/layer_ops.h (cuBLASLt, norm, GEMM+norm and GEMM-chain kernels). CUDA-free header: buffers are void*, streams opaque.
// Used by the CLI (`--device local`), the GPU tests, and later the tuner and the studio's
// worker thread. Invariants: every call makes m_device current first; device layouts are built
// once per (mask hash, block size) in Layouts() and reused by later RunMha calls.
#pragma once

#include <memory>
#include <string>

#include "engine/backend.h"
#include "kernels/attention_common/device_layout.h"

namespace stof::kernels {

class CudaBackend final : public engine::Backend {
 public:
  // Fails (with the reason) when there is no usable GPU or `device` does not exist.
  static engine::Expected<std::unique_ptr<CudaBackend>> Create(int device = 0);

  std::string Name() const override { return m_name; }  // "cuda:0 (NVIDIA H100 80GB HBM3)"
  engine::DeviceSpec Device() const override { return m_spec; }
  bool Supports(engine::DType dtype) const override { return dtype == engine::DType::kF16; }

  engine::Expected<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;
  engine::Status CopyToDevice(void* dst, const void* host_src, size_t bytes) override;
  engine::Status CopyToHost(void* host_dst, const void* src, size_t bytes) override;
  engine::Status Synchronize() override;

  // ValidateMhaCall, dtype f16, head_dim 64 or 128; then the row-wise kernel (config.kernel ==
  // kRowWise; BLOCK_M/BLOCK_N/num_warps ignored) or the block-wise kernel at config's BLOCK_M,
  // BLOCK_N, num_warps (CheckBlockSparseConfig against this device's shared memory). Layouts
  // come from Layouts() (the first call for a mask and block size builds and uploads one).
  // Asynchronous on call.stream; kernel faults surface at Synchronize.
  engine::Status RunMha(const engine::MhaCall& call) override;

  // The layer ops (cuda_backend_layer_ops.cpp; engine/layer_ops.h) and timing by CUDA events
  // (optionally over a CUDA graph of the work).
  engine::Status RunGemm(const engine::GemmCall& call) override;
  engine::Status RunBatchedGemm(const engine::BatchedGemmCall& call) override;
  engine::Status RunEpilogue(const engine::EpilogueCall& call) override;
  engine::Status RunNorm(const engine::NormCall& call) override;
  engine::Status RunGemmNorm(const engine::GemmNormCall& call) override;
  engine::Status RunGemmChain(const engine::GemmChainCall& call) override;
  engine::Status RunScores(const engine::ScoresCall& call) override;
  engine::Status RunHeads(const engine::HeadsCall& call) override;
  // The tuner's parameter spaces (cuda_backend_param_choices.cpp).
  engine::Expected<std::vector<engine::ParamMap>> GemmParamChoices(
      const engine::GemmCall& call) override;
  engine::Expected<std::vector<engine::ParamMap>> NormParamChoices(
      const engine::NormCall& call) override;
  engine::Expected<std::vector<engine::ParamMap>> GemmNormParamChoices(
      const engine::GemmNormCall& call) override;
  engine::Expected<std::vector<engine::ParamMap>> GemmChainParamChoices(
      const engine::GemmChainCall& call) override;
  engine::Expected<std::vector<engine::MhaConfig>> MhaConfigChoices(
      const engine::Workload& workload, const engine::Mask& mask) override;
  engine::Expected<engine::Measurement> Measure(
      const std::function<engine::Status(void* stream)>& work,
      const engine::MeasureOptions& options) override;

  DeviceLayoutCache& Layouts() { return m_layouts; }
  ~CudaBackend() override;

 private:
  CudaBackend();
  engine::Status MakeCurrent() const;
  struct LayerState;  // cuBLASLt handle, device masks (cuda_backend_layer_ops.cpp)
  engine::Expected<LayerState*> Layer();
  engine::Expected<void*> ChainWorkspace(size_t bytes, void* stream);  // RunGemmChain's
  engine::Expected<const void*> MaskWords(const engine::Mask& mask);
  struct MhaState;    // unfused / SD / SDF attention objects, scaled-q scratch
  engine::Status RunOtherMha(const engine::MhaCall& call, const void* q);
  engine::Expected<const void*> ScaledQ(const engine::MhaCall& call);
  std::unique_ptr<LayerState> m_layer;
  std::unique_ptr<MhaState> m_mha;

  int m_device = 0;
  std::string m_name;
  engine::DeviceSpec m_spec;
  DeviceLayoutCache m_layouts;
};

}  // namespace stof::kernels
