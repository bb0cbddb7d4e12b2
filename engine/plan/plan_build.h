// MakeAnalyticalPlan: the plan for a mask, a workload and a device whose MHA kernel was chosen
// by STOF's Eq. 1 + Eq. 2 (no tuning, no fusion yet). Shared by `stof select --plan-out` and
// the studio's "export plan"; tested in plan_build_test.cpp (the plan validates and replays
// its mask).
#pragma once

#include <string>

#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

// `spec` (may be null): the generator the mask came from; without one the mask goes inline
// (run-length rows). The tuning seed is the spec's seed (0 without one).
Plan MakeAnalyticalPlan(const Mask& mask, const MaskSpec* spec, const Workload& workload,
                        const DeviceSpec& device, const KernelSelection& selection,
                        const std::string& created_by);

}  // namespace stof::engine
