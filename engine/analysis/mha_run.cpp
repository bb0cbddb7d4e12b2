// ChooseMhaRun, ModelMhaRun, ChooseRun and the forms of a run choice (mha_run.h).
#include "engine/analysis/mha_run.h"

#include "engine/select/model_capabilities.h"

namespace stof::engine {

Expected<MhaRunChoice> ChooseMhaRun(const Mask& mask, const Workload& workload,
                                    const DeviceSpec& device, const MhaKernelCapabilities& caps,
                                    const std::string& decided_by) {
  // The kernels take f16 and (the Hopper kernel) bf16; a model's other types (the CPU
  // reference's f32) are asked about as f16, the kernels' default.
  Workload w = workload;
  if (w.dtype != DType::kBF16) w.dtype = DType::kF16;
  STOF_ASSIGN_OR_RETURN(const MhaChoice c, ChooseMhaConfig(mask, w, device, MhaRequest{}, caps));
  return RunChoiceOf(c, decided_by);
}

Expected<MhaRunChoice> ModelMhaRun(const Mask& mask, const Workload& workload,
                                   const DeviceSpec& device) {
  return ChooseMhaRun(mask, workload, device, ModelMhaCapabilities(), "engine model");
}

Expected<MhaRunChoice> ChooseRun(const MhaRunChooser& chooser, const Mask& mask,
                                 const Workload& workload, const DeviceSpec& device) {
  if (!chooser) return ModelMhaRun(mask, workload, device);
  STOF_ASSIGN_OR_RETURN(MhaRunChoice r, chooser(mask, workload, device));
  r.decided_by = "kernels";
  return r;
}

MhaConfig RunConfig(const MhaRunChoice& c) {
  if (c.kernel == MhaKernelName(MhaKernel::kRowWise)) return MhaConfig{MhaKernel::kRowWise, 64, 64, 4};
  return MhaConfig{MhaKernel::kBlockWise, c.block_m, c.block_n, c.num_warps};
}

MhaRunChoice RunChoiceOf(const MhaConfig& c, const std::string& decided_by) {
  MhaRunChoice r;
  r.kernel = MhaKernelName(c.kernel);
  r.decided_by = decided_by;
  if (c.kernel == MhaKernel::kRowWise) return r;
  r.block_m = c.block_m;
  r.block_n = c.block_n;
  r.num_warps = c.num_warps;
  r.family = IsHopperMhaWarps(c.num_warps) ? "hopper" : "portable";
  return r;
}

MhaRunChoice RunChoiceOf(const MhaChoice& c, const std::string& decided_by) {
  MhaRunChoice r;
  r.kernel = MhaChoiceKernelName(c);
  r.decided_by = decided_by;
  r.block_m = c.config.block_m;
  r.block_n = c.config.block_n;
  r.num_warps = c.config.num_warps;
  if (!c.native && !c.recompose && c.config.kernel == MhaKernel::kBlockWise)
    r.family = IsHopperMhaWarps(c.config.num_warps) ? "hopper" : "portable";
  r.kernel_source = c.kernel_source;
  r.params_source = c.params_source;
  r.note = c.note;
  return r;
}

nlohmann::json MhaRunChoiceJson(const MhaRunChoice& c) {
  nlohmann::json j = {{"kernel", c.kernel},
                      {"block_m", c.block_m},
                      {"block_n", c.block_n},
                      {"num_warps", c.num_warps},
                      {"family", c.family},
                      {"kernel_source", c.kernel_source},
                      {"params_source", c.params_source},
                      {"decided_by", c.decided_by}};
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

std::string MhaRunChoiceText(const MhaRunChoice& c) {
  std::string out;
  if (c.kernel != "block_wise") {
    out = c.kernel + " (kernel from " + c.kernel_source + ")";
  } else {
    const char* family = c.family == "hopper" ? "Hopper kernel (wgmma, TMA, warp-specialized)"
                                              : "portable kernel (mma.sync)";
    out = c.kernel + " " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + ", " +
          std::to_string(c.num_warps) + " warps: " + family + "; kernel from " + c.kernel_source +
          ", parameters from " + c.params_source;
  }
  if (c.decided_by == "engine model")
    out += " (the engine's model of the kernels' rules: this build has no kernels)";
  else if (c.decided_by == "tuned")
    out += " (tuned)";
  return out;
}

std::string MhaRunChoiceShort(const MhaRunChoice& c) {
  if (c.kernel != "block_wise") return c.kernel;
  return c.kernel + " " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + " w" +
         std::to_string(c.num_warps) + (c.family == "hopper" ? " (Hopper)" : "");
}

}  // namespace stof::engine
