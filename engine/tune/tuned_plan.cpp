// MakeTunedPlan (tuned_plan.h). Measurement entries: "segment N" (N from 1, layer 0 alone,
// from the tuner), "layer" (their sum), "model" (the whole model after tuning, measured) and
// "default model" (the untuned default scheme in the same process).
#include "engine/tune/tuned_plan.h"

#include "engine/plan/plan_build.h"
#include "engine/plan/plan_choices.h"
#include "engine/select/kernel_select.h"

namespace stof::engine {

Expected<Plan> MakeTunedPlan(const TuneResult& r, const OpGraph& g, const Mask& mask,
                             const TunedPlanInfo& info) {
  const Workload w = g.AttentionWorkload();
  auto sel = SelectKernel(mask, w, info.device);
  if (!sel.IsOk()) return sel.ToStatus().WithContext("plan: ");
  Plan p = MakeAnalyticalPlan(mask, info.spec, w, info.device, *sel, info.created_by);
  ModelConfig model;
  model.name = g.model;
  model.family = g.family;
  model.hidden = g.hidden;
  model.heads = g.heads;
  model.head_dim = g.head_dim;
  model.ffn = g.ffn;
  model.layers = g.layers;
  p.model = ModelToPlan(model, g.part, info.separate_bias);
  p.fusion = FusionToPlan(g, r.scheme, r.choices);
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const SegmentResult& s = r.segments[i];
    if (s.tmpl == "sparse_mha" && s.choice.mha_variant == MhaVariant::kFused) {
      p.mha.kernel = s.choice.mha_config.kernel;
      p.mha.block_m = s.choice.mha_config.block_m;
      p.mha.block_n = s.choice.mha_config.block_n;
      p.mha.num_warps = s.choice.mha_config.num_warps;
      p.mha.chosen_by = "tuned";
      // What a replay runs: the configuration the tuner chose for the attention segment.
      p.mha.runs = PlanRunsOf(RunChoiceOf(s.choice.mha_config, "tuned"));
    }
    PlanMeasurement m;
    m.what = PlanSegmentWhat(i);
    m.latency_us = s.cost.us;
    m.measured = s.cost.measured;
    // The bytes are the model's figure: kept only beside a predicted latency, so a measured
    // entry never carries a number that was not measured.
    if (s.cost.bytes > 0 && !s.cost.measured) m.dram_bytes = s.cost.bytes;
    p.measurements.push_back(m);
  }
  p.measurements.push_back({"layer", r.total_us, r.measured, std::nullopt});
  if (info.model_us) p.measurements.push_back({"model", *info.model_us, true, std::nullopt});
  if (info.default_model_us)
    p.measurements.push_back({"default model", *info.default_model_us, true, std::nullopt});
  p.tuning.method = TuneMethodName(r.method);
  p.tuning.budget_s = info.options.budget_s;
  p.tuning.time_spent_s = r.stats.total_s;
  p.tuning.candidates_measured = r.stats.candidates;
  p.tuning.seed = info.options.seed;
  return p;
}

}  // namespace stof::engine
