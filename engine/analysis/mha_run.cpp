// ModelMhaRun, ChooseRun and the forms of a run choice (mha_run.h).
#include "engine/analysis/mha_run.h"

#include <cstdio>

#include "engine/select/hopper_select.h"
#include "engine/select/kernel_select.h"
#include "engine/tune/ladder.h"

namespace stof::engine {

namespace {
// Grouped key/value heads, q_len != seq_len or a head size other than 64 and 128: as the
// kernels do (kernels/attention/mha_choice.cpp), the Hopper tile model picks the tile and the
// packing; Eq. 1 / Eq. 2 do not decide.
Expected<MhaRunChoice> ModelShapeRun(const Mask& mask, const Workload& w, const DeviceSpec& device) {
  STOF_ASSIGN_OR_RETURN(const HopperShapeChoice pick, ChooseHopperTileForShape(mask, w, device));
  MhaRunChoice r = RunChoiceOf(pick.config, "engine model");
  r.kernel_source = "shape";
  r.params_source = "hopper tile model";
  r.note = HopperShapeNote(w, pick.config, pick.packing);
  return r;
}

}  // namespace

Expected<MhaRunChoice> ModelMhaRun(const Mask& mask, const Workload& workload,
                                   const DeviceSpec& device) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  if (!workload.IsSquareMha() || (workload.head_dim != 64 && workload.head_dim != 128))
    return ModelShapeRun(mask, workload, device);
  STOF_ASSIGN_OR_RETURN(const KernelSelection sel, SelectKernel(mask, workload, device));
  STOF_ASSIGN_OR_RETURN(const MhaConfig portable, DefaultFusedMhaConfig(workload, mask, device));
  MhaRunChoice r = RunChoiceOf(portable, "engine model");
  r.kernel_source = "eq1";
  if (portable.kernel == MhaKernel::kRowWise) {
    r.params_source = "-";
    return r;
  }
  r.params_source = "eq2";
  if (portable.block_m != sel.block_m || portable.block_n != sel.block_n ||
      portable.num_warps != sel.num_warps) {
    r.params_source = "eq2 (preferred set)";
    r.note = "Eq. 2 picked " + MhaConfigText(sel.block_m, sel.block_n, sel.num_warps) +
             "; automatic choices use BLOCK_M, BLOCK_N >= 64 with one warp per 16 rows, which ran "
             "fastest on an H100 (docs/kernels.md): " +
             MhaConfigText(portable.block_m, portable.block_n, portable.num_warps);
  }
  STOF_ASSIGN_OR_RETURN(const HopperTileEstimate e,
                        EstimateHopperTile(mask, workload, device, portable));
  if (!e.prefer_hopper) return r;
  const std::string before = MhaConfigText(portable.block_m, portable.block_n, portable.num_warps);
  r = RunChoiceOf(e.hopper, "engine model");
  r.kernel_source = "eq1";
  r.params_source = "hopper tile model";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", e.ratio);
  r.note = "sm_90: the Hopper kernel " +
           MhaConfigText(e.hopper.block_m, e.hopper.block_n, e.hopper.num_warps) +
           " is estimated at " + ratio + " x the time of " + before +
           " on this mask (valid-block elements over measured rates; docs/kernels-hopper.md)";
  return r;
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
