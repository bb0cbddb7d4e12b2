// MakeTunedPlan: the plan file of a tuning run (docs/plan-schema.md): the device, workload,
// mask and model it was tuned for, the chosen scheme with each segment's template and
// parameters, what was measured (or predicted: each entry says which), and how the tuning ran.
// `stof run --plan` replays it. Used by `stof tune` and the studio's export.
#pragma once

#include <optional>
#include <string>

#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/plan/plan.h"
#include "engine/tune/tune_types.h"

namespace stof::engine {

struct TunedPlanInfo {
  DeviceSpec device;               // what it was tuned on (or predicted for)
  const MaskSpec* spec = nullptr;  // the mask's generator, if any (else the mask goes inline)
  bool separate_bias = false;      // the graph was built with separate Bias ops
  TuneOptions options;
  std::string created_by = "stof";
  // Whole-model latency of the tuned plan with all the model's layers (g.layers), measured
  // right after tuning (stof run --plan compares against it); nullopt when nothing was.
  std::optional<double> model_us;
  std::optional<double> default_model_us;  // the untuned default scheme, same run
};

Expected<Plan> MakeTunedPlan(const TuneResult& result, const OpGraph& g, const Mask& mask,
                             const TunedPlanInfo& info);

}  // namespace stof::engine
