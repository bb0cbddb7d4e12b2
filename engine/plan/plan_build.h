// MakeAnalyticalPlan: the plan for a mask, a workload and a device whose MHA kernel was chosen
// by STOF's Eq. 1 + Eq. 2 (no tuning, no fusion yet), with what the engine runs beside it
// (mha.runs); MakeShapePlan / MakeCacheRowsPlan the same for shapes only the Hopper kernel
// serves. Shared by `stof select --plan-out` and the studio's "export plan"; tested in
// plan_build_test.cpp and plan_long_test.cpp (the plan validates, replays its mask and runs
// what `runs` says).
#pragma once

#include <string>

#include "engine/analysis/mha_run.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

// `spec` (may be null): the generator the mask came from; without one the mask goes inline
// (run-length rows). The tuning seed is the spec's seed (0 without one).
// `runs` (may be null): what the engine runs (ChooseRun), recorded as mha.runs.
Plan MakeAnalyticalPlan(const Mask& mask, const MaskSpec* spec, const Workload& workload,
                        const DeviceSpec& device, const KernelSelection& selection,
                        const std::string& created_by, const MhaRunChoice* runs = nullptr);

// The plan of a shape only the Hopper kernel serves (grouped key/value heads, q_len != seq_len;
// schema version 2): `square` is the L_k x L_k mask whose last q_len rows the workload runs
// (the plan keeps it, as a spec when `spec` is given), `runs` what runs (ChooseRun: the Hopper
// tile model's configuration), which is also the plan's mha with chosen_by "shape".
Plan MakeShapePlan(const Mask& square, const MaskSpec* spec, const Workload& workload,
                   const DeviceSpec& device, const MhaRunChoice& runs,
                   const std::string& created_by);

// The same for a KV cache past a square mask (schema version 3, mask.rows "last"): `last_rows`
// is the last workload.q_len rows over all workload.seq_len keys of `spec`'s mask (RowRuns::
// LastRowsToMask of its row runs), which the plan records (hash, density) beside the spec.
Plan MakeCacheRowsPlan(const Mask& last_rows, const MaskSpec& spec, const Workload& workload,
                       const DeviceSpec& device, const MhaRunChoice& runs,
                       const std::string& created_by);

// A run choice as a plan's mha.runs, and back (the sources are not kept: decided_by and the
// note say enough to replay and to show).
PlanMhaRuns PlanRunsOf(const MhaRunChoice& c);
MhaRunChoice RunChoiceOfPlan(const PlanMhaRuns& r);

}  // namespace stof::engine
