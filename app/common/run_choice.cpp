// MakeMhaRunChooser (run_choice.h).
#include "app/common/run_choice.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/attention/prepared_mha.h"
#endif

namespace stof::app {

engine::MhaRunChooser MakeMhaRunChooser() {
#ifdef STOF_WITH_KERNELS
  return [](const engine::Mask& mask, const engine::Workload& workload,
            const engine::DeviceSpec& device) -> engine::Expected<engine::MhaRunChoice> {
    engine::Workload w = workload;
    // The kernels take f16 and (the Hopper kernel) bf16; a model's other types (the CPU
    // reference's f32) are asked about as f16, the kernels' default.
    if (w.dtype != engine::DType::kBF16) w.dtype = engine::DType::kF16;
    auto c = kernels::ChooseMhaConfig(mask, w, device, kernels::MhaRequest{});
    if (!c.IsOk()) return c.ToStatus();
    engine::MhaRunChoice r;
    r.kernel = kernels::MhaChoiceKernelName(*c);
    r.block_m = c->config.block_m;
    r.block_n = c->config.block_n;
    r.num_warps = c->config.num_warps;
    if (c->config.kernel == engine::MhaKernel::kBlockWise)
      r.family = engine::IsHopperMhaWarps(c->config.num_warps) ? "hopper" : "portable";
    r.kernel_source = c->kernel_source;
    r.params_source = c->params_source;
    r.note = c->note;
    return r;
  };
#else
  return nullptr;
#endif
}

}  // namespace stof::app
