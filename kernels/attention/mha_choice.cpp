// MhaCapabilities and the bound choice (mha_choice.h): each capability is the kernel's own
// rule, as its launch checks it (block_sparse_attention.h and recomposed_attention.h, whose
// rules are the engine's host arithmetic, engine/select/block_sparse_rules.h and
// recompose_params.h; hopper_attention.h's CheckHopperAttentionConfig, which the engine models
// for builds without kernels, engine/select/model_capabilities.h). Host code only.
#include "kernels/attention/mha_choice.h"

#include <string>

#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention_hopper/hopper_attention.h"
#include "kernels/recomposition/recomposed_attention.h"

namespace stof::kernels {

namespace {

class BuildCapabilities final : public engine::MhaKernelCapabilities {
 public:
  engine::Status CheckBlockWise(int64_t d, int64_t bm, int64_t bn, int64_t warps,
                                int64_t smem) const override {
    return CheckBlockSparseConfig(d, bm, bn, warps, smem);
  }
  bool PreferredBlockWise(int64_t d, int64_t bm, int64_t bn, int64_t warps,
                          int64_t smem) const override {
    return IsPreferredBlockSparseConfig(d, bm, bn, warps, smem);
  }
  std::string DescribeBlockWise(int64_t d, int64_t smem) const override {
    return DescribeSupportedBlockSparseConfigs(d, smem);
  }
  engine::Status CheckHopper(int64_t d, int64_t bm, int64_t bn, int64_t warps,
                             int64_t smem) const override {
    return CheckHopperAttentionConfig(d, bm, bn, warps, smem);
  }
  engine::Status CheckRecompose(const engine::RecomposeParams& p, int64_t d,
                                engine::RecomposeVariant v, int64_t smem) const override {
    return CheckRecomposeParams(p, d, v, smem);
  }
};

}  // namespace

const engine::MhaKernelCapabilities& MhaCapabilities() {
  static const BuildCapabilities kCaps;
  return kCaps;
}

engine::Expected<MhaChoice> ChooseMhaConfig(const engine::Mask& mask,
                                            const engine::Workload& workload,
                                            const engine::DeviceSpec& device,
                                            const MhaRequest& request) {
  return engine::ChooseMhaConfig(mask, workload, device, request, MhaCapabilities());
}

engine::Expected<MhaChoice> ChooseMhaConfigForPatterns(const engine::MaskSet& set,
                                                       const engine::Workload& workload,
                                                       const engine::DeviceSpec& device,
                                                       const MhaRequest& request) {
  return engine::ChooseMhaConfigForPatterns(set, workload, device, request, MhaCapabilities());
}

}  // namespace stof::kernels
