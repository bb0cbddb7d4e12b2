// MakeAnalyticalPlan (plan_build.h).
#include "engine/plan/plan_build.h"

namespace stof::engine {

Plan MakeAnalyticalPlan(const Mask& mask, const MaskSpec* spec, const Workload& workload,
                        const DeviceSpec& device, const KernelSelection& selection,
                        const std::string& created_by) {
  Plan p;
  p.created_by = created_by;
  p.device = device;
  p.workload = workload;
  p.mask.seq_len = mask.Rows();
  p.mask.hash = mask.HashHex();
  p.mask.density = mask.Density();
  if (spec != nullptr) {
    p.mask.has_spec = true;
    p.mask.spec = *spec;
  } else {
    p.mask.inline_mask = mask;
  }
  p.mha.kernel = selection.kernel;
  p.mha.block_m = selection.block_m;
  p.mha.block_n = selection.block_n;
  p.mha.num_warps = selection.num_warps;
  p.mha.chosen_by = "eq1+eq2";
  p.tuning.method = "analytical";
  p.tuning.seed = spec != nullptr ? spec->seed : 0;
  return p;
}

}  // namespace stof::engine
