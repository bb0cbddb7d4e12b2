// MakeAnalyticalPlan, MakeShapePlan and MakeCacheRowsPlan (plan_build.h), and mha.runs <->
// MhaRunChoice.
#include "engine/plan/plan_build.h"

namespace stof::engine {

Plan MakeAnalyticalPlan(const Mask& mask, const MaskSpec* spec, const Workload& workload,
                        const DeviceSpec& device, const KernelSelection& selection,
                        const std::string& created_by, const MhaRunChoice* runs) {
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
  if (runs != nullptr) p.mha.runs = PlanRunsOf(*runs);
  p.tuning.method = "analytical";
  p.tuning.seed = spec != nullptr ? spec->seed : 0;
  return p;
}

Plan MakeShapePlan(const Mask& square, const MaskSpec* spec, const Workload& workload,
                   const DeviceSpec& device, const MhaRunChoice& runs,
                   const std::string& created_by) {
  KernelSelection none;  // Eq. 1 / Eq. 2 are not evaluated for such shapes: mha is `runs`
  Plan p = MakeAnalyticalPlan(square, spec, workload, device, none, created_by, &runs);
  const MhaConfig config = RunConfig(runs);
  p.mha.kernel = config.kernel;
  p.mha.block_m = config.block_m;
  p.mha.block_n = config.block_n;
  p.mha.num_warps = config.num_warps;
  p.mha.chosen_by = "shape";
  return p;
}

Plan MakeCacheRowsPlan(const Mask& last_rows, const MaskSpec& spec, const Workload& workload,
                       const DeviceSpec& device, const MhaRunChoice& runs,
                       const std::string& created_by) {
  Plan p = MakeShapePlan(last_rows, &spec, workload, device, runs, created_by);
  p.mask.seq_len = last_rows.Cols();
  p.mask.last_rows = last_rows.Rows();
  return p;
}

PlanMhaRuns PlanRunsOf(const MhaRunChoice& c) {
  PlanMhaRuns r;
  const MhaConfig config = RunConfig(c);
  r.kernel = config.kernel;
  if (config.kernel == MhaKernel::kBlockWise) {
    r.block_m = config.block_m;
    r.block_n = config.block_n;
    r.num_warps = config.num_warps;
  }
  r.decided_by = c.decided_by;
  r.note = c.note;
  return r;
}

MhaRunChoice RunChoiceOfPlan(const PlanMhaRuns& r) {
  MhaRunChoice c = RunChoiceOf(MhaConfig{r.kernel, r.block_m, r.block_n, r.num_warps}, r.decided_by);
  c.note = r.note;
  return c;
}

}  // namespace stof::engine
