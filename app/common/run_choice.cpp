// MakeMhaRunChooser and the forms of its result (run_choice.h).
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
    w.dtype = engine::DType::kF16;  // the kernels' one data type
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

nlohmann::json RunChoiceJson(const engine::MhaRunChoice& c) {
  nlohmann::json j = {{"kernel", c.kernel},
                      {"block_m", c.block_m},
                      {"block_n", c.block_n},
                      {"num_warps", c.num_warps},
                      {"family", c.family},
                      {"kernel_source", c.kernel_source},
                      {"params_source", c.params_source}};
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

std::string RunChoiceText(const engine::MhaRunChoice& c) {
  if (c.kernel != "block_wise") return c.kernel + " (kernel from " + c.kernel_source + ")";
  const char* family = c.family == "hopper" ? "Hopper kernel (wgmma, TMA, warp-specialized)"
                                            : "portable kernel (mma.sync)";
  return c.kernel + " " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + ", " +
         std::to_string(c.num_warps) + " warps: " + family + "; kernel from " + c.kernel_source +
         ", parameters from " + c.params_source;
}

}  // namespace stof::app
