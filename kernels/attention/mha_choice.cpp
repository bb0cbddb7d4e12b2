// MhaCapabilities and the bound choice (mha_choice.h): the engine's rules, which the kernels'
// launch checks call too (engine/select/block_sparse_rules.h, recompose_params.h,
// model_capabilities.h's CheckHopperConfigRules), over the Hopper kernel's own shared memory per
// variant (hopper_attention.h, HopperAttentionSmemBytes): engine::RuleMhaCapabilities, as a
// build without kernels runs it with the model's sizes. Host code only.
#include "kernels/attention/mha_choice.h"

#include "engine/select/model_capabilities.h"
#include "kernels/attention_hopper/hopper_attention.h"

namespace stof::kernels {

const engine::MhaKernelCapabilities& MhaCapabilities() {
  // The engine's rules (the kernels' launch checks call the same) over this kernel's own
  // Hopper shared-memory sizes.
  static const engine::RuleMhaCapabilities kCaps(HopperAttentionSmemBytes);
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
