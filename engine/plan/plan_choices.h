// Plans <-> what the layer runner runs: a segment's SegmentChoice as the plan's free-form
// "params" and back, a (scheme, choices) pair as the plan's "fusion" section and back, the
// model as the plan's "model" section and the layer graph it describes, and the check that a
// plan fits a run (refused when it was tuned for another workload, model, mask or op count;
// a warning when it was made on another device). Used by `stof run --plan`
// (app/cli/cmd_run.cpp) to replay plans and by the tuner (engine/tune/, `stof tune`) to write
// them; tested in tests/engine/plan_choices_test.cpp. Formats are in docs/plan-schema.md.
// Invariants: SegmentChoiceFromParams(SegmentChoiceToParams(c, k), k) gives a choice whose
// params are again SegmentChoiceToParams(c, k) (what the kind does not use is not written);
// PlanToRun(FusionToPlan(g, s, c)) gives back s and, for what each segment uses, c. Messages
// start with `name` (a file name) or `field` and end "(refused)" when a plan does not fit.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/graph/model_config.h"
#include "engine/graph/op.h"
#include "engine/mask/mask.h"
#include "engine/plan/plan.h"
#include "engine/run/segment_choice.h"

namespace stof::engine {

// A segment's parameters as a plan writes them. kSparseMha: {"variant": "fused" | "unfused" |
// "sd" | "sdf"}, plus for fused "kernel" ("row_wise" | "block_wise"), "block_m", "block_n",
// "num_warps", and for sd / sdf "sub_len". Every other kind (kNone included): c.params as
// integers ({"algo": 3}, {"bm": 32, "bk": 64, "warps": 4, "stages": 2}).
nlohmann::json SegmentChoiceToParams(const SegmentChoice& c, TemplateKind kind);

// The inverse; strict. `field` is the params' path ("plan.json: fusion.segments[2].params");
// messages name the key ("...params.block_m: expected an integer >= 1, got \"x\""). kSparseMha:
// only the keys above, each only with its variant; integers >= 1; keys left out keep the
// SegmentChoice defaults. Other kinds: every value an integer in 0..2^31 - 1 (0 is a valid
// cuBLASLt algorithm index); the names are the backend's to check when the segment runs.
Expected<SegmentChoice> SegmentChoiceFromParams(const nlohmann::json& params, TemplateKind kind,
                                                const std::string& field);

// The plan's fusion section for `s` on `g`: the code and one segment per segment of s, with
// the template it matches ("" when choices[i].force_op_by_op) and SegmentChoiceToParams of
// choices[i] (empty choices = defaults: every segment's default choice).
PlanFusion FusionToPlan(const OpGraph& g, const FusionScheme& s,
                        const std::vector<SegmentChoice>& choices);

struct PlanRun {
  FusionScheme scheme;
  std::vector<SegmentChoice> choices;  // one per segment of scheme
};
// The scheme and choices a plan replays on `g`: fusion.code (empty: DefaultScheme(g)); per
// segment, a plan template "" where g's segment matches a template forces op by op; a plan
// template other than the one g's segment matches is refused; a sparse_mha segment's fused
// configuration is plan.mha, overridden key by key by its params. An empty segment list (a
// code without templates yet) gives default choices with plan.mha. `name` prefixes messages.
Expected<PlanRun> PlanToRun(const Plan& plan, const OpGraph& g, const std::string& name);

// The plan's model section for a config, the layer part and GraphRequest::separate_bias.
PlanModel ModelToPlan(const ModelConfig& model, LayerPart part, bool separate_bias);
// The layer graph of plan.model at plan.workload's batch and seq_len in `dtype`; errors
// "<name>: model: the plan has no model; give --model or --config" without one.
Expected<OpGraph> PlanGraph(const Plan& plan, DType dtype, const std::string& name);

struct PlanCompat {
  std::vector<std::string> warnings;  // "plan made on A, running on B: ..."
};
// Whether `plan` may be replayed on graph `g` with `mask` on `device`. Refused (an error
// ending "(refused)", naming both values): workload batch, seq_len, heads or head_dim other
// than g's; plan.model (when present) with another family, part, hidden, heads, head_dim,
// ffn or separate_bias than g (its layer count may differ: a plan is per layer); a mask hash
// other than mask.HashHex(); a fusion code whose length is not g.Size(). Warned: a plan made
// on another device (exact name compare).
Expected<PlanCompat> CheckPlanFor(const Plan& plan, const OpGraph& g, const Mask& mask,
                                  const DeviceSpec& device, const std::string& name);

}  // namespace stof::engine
